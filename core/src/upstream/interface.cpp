#include "trnslurm/upstream/interface.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::upstream {

using nlohmann::json;

namespace {

constexpr std::string_view switch_actions[] = {"store_true", "store_false", "store_const", "append_const",
                                               "count",      "help",        "version"};
constexpr std::string_view repeatable_actions[] = {"append", "append_const", "extend", "count"};

bool contains(std::span<const std::string_view> list, std::string_view word) {
  return std::ranges::find(list, word) != list.end();
}

// Field access with the record's JSON path in every error.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  Result<const json*> member(const json& obj, std::string_view key, const std::string& path) const {
    if (!obj.is_object()) return bad(path, "an object");
    const auto it = obj.find(std::string(key));
    if (it == obj.end()) return fail(fmt::format("missing '{}'", key), where(path), hint());
    return &*it;
  }

  Result<std::string> string(const json& obj, std::string_view key, const std::string& path) const {
    auto value = member(obj, key, path);
    if (!value) return std::unexpected(value.error());
    if (!(*value)->is_string()) return bad(path + "." + std::string(key), "a string");
    return (*value)->get<std::string>();
  }

  Result<bool> boolean(const json& obj, std::string_view key, const std::string& path) const {
    auto value = member(obj, key, path);
    if (!value) return std::unexpected(value.error());
    if (!(*value)->is_boolean()) return bad(path + "." + std::string(key), "true or false");
    return (*value)->get<bool>();
  }

  Result<const json*> typed(const json& obj, std::string_view key, const std::string& path,
                            json::value_t kind, std::string_view kind_name) const {
    auto value = member(obj, key, path);
    if (value && (*value)->type() != kind) return bad(path + "." + std::string(key), kind_name);
    return value;
  }

  std::unexpected<Error> bad(const std::string& path, std::string_view expected) const {
    return fail(fmt::format("{} expected", expected), where(path), hint());
  }
  std::string where(const std::string& path) const { return fmt::format("{}: {}", source_, path); }
  static std::string hint() {
    return "regenerate the record with tools/upstream-interface (docs/upstream.md)";
  }

 private:
  std::string_view source_;
};

Result<ValueType> value_type(const json& type, const Reader& r, const std::string& path) {
  if (type.is_null()) return ValueType::none;
  if (!type.is_string()) return r.bad(path, "int, float, str, bool, other:<expr> or null");
  const auto text = type.get<std::string>();
  if (text == "int") return ValueType::integer;
  if (text == "float") return ValueType::floating;
  if (text == "str") return ValueType::string;
  if (text == "bool") return ValueType::boolean;
  if (text.starts_with("other:")) return ValueType::other;
  return r.bad(path, "int, float, str, bool, other:<expr> or null");
}

Result<std::optional<std::string>> nargs_of(const json& nargs, const Reader& r, const std::string& path) {
  if (nargs.is_null()) return std::nullopt;
  if (nargs.is_number_unsigned()) return std::to_string(nargs.get<std::uint64_t>());
  if (nargs.is_string() && (nargs == "?" || nargs == "*" || nargs == "+")) return nargs.get<std::string>();
  return r.bad(path, "null, a count, '?', '*' or '+'");
}

Result<std::vector<std::string>> names_of(const json& names, const Reader& r, const std::string& path) {
  std::vector<std::string> out;
  if (!names.is_array() || names.empty()) return r.bad(path, "a non-empty list of option strings");
  for (const auto& name : names) {
    if (!name.is_string() || name.get<std::string>().empty())
      return r.bad(path, "a non-empty list of option strings");
    out.push_back(name.get<std::string>());
  }
  return out;
}

// Moves a field's value into place, or keeps the first error met.
template <class T, class U>
void take(Result<T>&& value, U& into, std::optional<Error>& error) {
  if (!value) {
    if (!error) error = std::move(value.error());
    return;
  }
  into = std::move(*value);
}

// std::expected::and_then, which g++ 12's library lacks.
template <class F>
auto then(Result<const json*> value, F&& f) -> decltype(f(*value)) {
  if (!value) return std::unexpected(value.error());
  return f(*value);
}

Result<Flag> flag_of(const json& j, const Reader& r, const std::string& path) {
  Flag f;
  std::optional<Error> error;
  take(then(r.member(j, "names", path), [&](const json* n) { return names_of(*n, r, path + ".names"); }),
       f.names, error);
  take(r.string(j, "dest", path), f.dest, error);
  take(r.string(j, "action", path), f.action, error);
  take(then(r.member(j, "type", path), [&](const json* t) { return value_type(*t, r, path + ".type"); }),
       f.type, error);
  take(r.boolean(j, "required", path), f.required, error);
  take(then(r.member(j, "nargs", path), [&](const json* n) { return nargs_of(*n, r, path + ".nargs"); }),
       f.nargs, error);
  const json* dflt = nullptr;
  const json* choices = nullptr;
  take(r.member(j, "default", path), dflt, error);
  take(r.member(j, "choices", path), choices, error);
  if (error) return std::unexpected(*error);
  if (!choices->is_null() && !choices->is_array()) return r.bad(path + ".choices", "a list or null");
  f.type_text = j.at("type").is_string() ? j.at("type").get<std::string>() : "";
  f.default_value = *dflt;
  if (choices->is_array()) f.choices.assign(choices->begin(), choices->end());
  return f;
}

Result<ScriptInterface> script_of(const std::string& name, const json& j, const Reader& r) {
  const std::string path = fmt::format("scripts[{}]", name);
  ScriptInterface s;
  s.path = name;
  auto parse = r.string(j, "parse", path);
  if (!parse) return std::unexpected(parse.error());
  if (*parse != "strict" && *parse != "known") return r.bad(path + ".parse", "'strict' or 'known'");
  s.parse = *parse == "strict" ? ParseMode::strict : ParseMode::known;
  auto parser = r.string(j, "parser", path);
  if (!parser) return std::unexpected(parser.error());
  s.parser_file = std::move(*parser);
  if (const auto abbrev = j.find("allow_abbrev"); abbrev != j.end()) {
    if (!abbrev->is_boolean()) return r.bad(path + ".allow_abbrev", "true or false");
    s.allow_abbrev = abbrev->get<bool>();
  }
  auto flags = r.typed(j, "flags", path, json::value_t::array, "a list");
  if (!flags) return std::unexpected(flags.error());
  for (std::size_t i = 0; i < (*flags)->size(); ++i) {
    auto flag = flag_of((**flags)[i], r, fmt::format("{}.flags[{}]", path, i));
    if (!flag) return std::unexpected(flag.error());
    s.flags.push_back(std::move(*flag));
  }
  return s;
}

Result<LauncherArg> launcher_arg_of(const json& j, const Reader& r, const std::string& path) {
  auto flag = r.member(j, "flag", path);
  auto value = r.member(j, "value", path);
  if (!flag) return std::unexpected(flag.error());
  if (!value) return std::unexpected(value.error());
  LauncherArg a;
  if ((*flag)->is_string()) a.flag = (*flag)->get<std::string>();
  const json& v = **value;
  if (v.is_string()) a.values.push_back(v.get<std::string>());
  if (v.is_array())
    for (const auto& item : v)
      if (item.is_string()) a.values.push_back(item.get<std::string>());
  const auto conditional = j.find("conditional");
  a.conditional = conditional != j.end() && conditional->is_boolean() && conditional->get<bool>();
  return a;
}

Result<std::map<std::string, std::string, std::less<>>> strings_of(const json& j, std::string_view key,
                                                                   const Reader& r, const std::string& path) {
  auto obj = r.typed(j, key, path, json::value_t::object, "an object");
  if (!obj) return std::unexpected(obj.error());
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [name, value] : (*obj)->items()) {
    if (!value.is_string()) return r.bad(fmt::format("{}.{}[{}]", path, key, name), "a string");
    out.emplace(name, value.get<std::string>());
  }
  return out;
}

Result<Launcher> launcher_of(const std::string& name, const json& j, const Reader& r) {
  const std::string path = fmt::format("launchers[{}]", name);
  Launcher l;
  l.path = name;
  std::optional<Error> error;
  const json* args = nullptr;
  take(r.string(j, "runs", path), l.runs, error);
  take(r.typed(j, "args", path, json::value_t::array, "a list"), args, error);
  take(strings_of(j, "env", r, path), l.env, error);
  take(strings_of(j, "settings", r, path), l.settings, error);
  for (std::size_t i = 0; !error && i < args->size(); ++i)
    take(launcher_arg_of((*args)[i], r, fmt::format("{}.args[{}]", path, i)), l.args.emplace_back(), error);
  if (error) return std::unexpected(*error);
  return l;
}

Result<LogPiece> log_piece_of(const json& j, const Reader& r, const std::string& path) {
  LogPiece p;
  if (j.is_string()) {
    p.literal = j.get<std::string>();
    return p;
  }
  auto field = r.string(j, "field", path);
  if (!field) return std::unexpected(field.error());
  p.field = std::move(*field);
  if (j.contains("spec")) {
    auto spec = r.string(j, "spec", path);
    if (!spec) return std::unexpected(spec.error());
    p.spec = std::move(*spec);
  }
  return p;
}

Result<LogCall> log_call_of(const json& j, const Reader& r, const std::string& path) {
  LogCall c;
  std::optional<Error> error;
  const json* when = nullptr;
  take(r.string(j, "path", path), c.path, error);
  take(r.string(j, "function", path), c.function, error);
  take(strings_of(j, "arguments", r, path), c.arguments, error);
  take(strings_of(j, "counted", r, path), c.counted, error);
  take(r.typed(j, "when", path, json::value_t::array, "a list"), when, error);
  if (error) return std::unexpected(*error);
  for (const auto& test : *when) {
    if (!test.is_string()) return r.bad(path + ".when", "a list of tests as written");
    c.when.push_back(test.get<std::string>());
  }
  for (const auto& [name, moment] : c.counted)
    if (moment != "before" && moment != "after")
      return r.bad(fmt::format("{}.counted[{}]", path, name), "'before' or 'after'");
  return c;
}

Result<LogFormat> log_format_of(const std::string& key, const json& j, const Reader& r) {
  const std::string path = fmt::format("log_formats[{}]", key);
  LogFormat f;
  f.key = key;
  const auto hash = key.find('#');
  f.path = key.substr(0, hash);
  f.label = hash == std::string::npos ? "" : key.substr(hash + 1);
  std::optional<Error> error;
  const json* pieces = nullptr;
  take(r.string(j, "function", path), f.function, error);
  take(r.typed(j, "pieces", path, json::value_t::array, "a list"), pieces, error);
  if (j.contains("call")) take(log_call_of(j.at("call"), r, path + ".call"), f.call, error);
  for (std::size_t i = 0; !error && i < pieces->size(); ++i)
    take(log_piece_of((*pieces)[i], r, fmt::format("{}.pieces[{}]", path, i)), f.pieces.emplace_back(),
         error);
  if (error) return std::unexpected(*error);
  if (f.pieces.empty()) return r.bad(path + ".pieces", "a non-empty list");
  return f;
}

Result<void> header_of(const json& j, const Reader& r, Interface& out) {
  auto format = r.typed(j, "format", "record", json::value_t::number_unsigned, "format 1");
  if (!format) return std::unexpected(format.error());
  if (**format != 1) return r.bad("format", "format 1 (a newer trnslurm reads this record)");
  std::optional<Error> error;
  take(r.string(j, "package", "record"), out.package, error);
  take(r.string(j, "release", "record"), out.release, error);
  take(r.string(j, "repository", "record"), out.repository, error);
  take(r.string(j, "commit", "record"), out.commit, error);
  if (error) return std::unexpected(*error);
  return {};
}

Result<void> body_of(const json& j, const Reader& r, Interface& out) {
  auto scripts = r.typed(j, "scripts", "record", json::value_t::object, "an object");
  if (!scripts) return std::unexpected(scripts.error());
  for (const auto& [name, script] : (*scripts)->items()) {
    auto s = script_of(name, script, r);
    if (!s) return std::unexpected(s.error());
    out.scripts.push_back(std::move(*s));
  }
  auto launchers = r.typed(j, "launchers", "record", json::value_t::object, "an object");
  if (!launchers) return std::unexpected(launchers.error());
  for (const auto& [name, launcher] : (*launchers)->items()) {
    auto l = launcher_of(name, launcher, r);
    if (!l) return std::unexpected(l.error());
    out.launchers.push_back(std::move(*l));
  }
  auto logs = r.typed(j, "log_formats", "record", json::value_t::object, "an object");
  if (!logs) return std::unexpected(logs.error());
  for (const auto& [key, format] : (*logs)->items()) {
    auto f = log_format_of(key, format, r);
    if (!f) return std::unexpected(f.error());
    out.log_formats.push_back(std::move(*f));
  }
  return {};
}

bool ends_with_component(std::string_view path, std::string_view tail) {
  if (path == tail) return true;
  return path.size() > tail.size() && path.ends_with(tail) && path[path.size() - tail.size() - 1] == '/';
}

}  // namespace

bool Flag::positional() const {
  return !names.empty() && !names.front().starts_with('-');
}

bool Flag::takes_value() const {
  return !contains(switch_actions, action) && nargs != "0";
}

bool Flag::repeatable() const {
  return contains(repeatable_actions, action);
}

std::size_t Flag::min_values() const {
  if (!takes_value() || nargs == "?" || nargs == "*") return 0;
  if (!nargs || *nargs == "+") return 1;
  return parse_number<std::size_t>(*nargs).value_or(0);
}

std::optional<std::size_t> Flag::max_values() const {
  if (nargs == "*" || nargs == "+") return std::nullopt;
  if (nargs == "?") return 1;
  return min_values();
}

const Flag* ScriptInterface::find(std::string_view option) const {
  for (const auto& f : flags)
    if (!f.positional() && std::ranges::find(f.names, option) != f.names.end()) return &f;
  return nullptr;
}

std::vector<std::string> ScriptInterface::option_names() const {
  std::vector<std::string> out;
  for (const auto& f : flags)
    if (!f.positional()) out.insert(out.end(), f.names.begin(), f.names.end());
  return out;
}

Result<const ScriptInterface*> Interface::script(std::string_view path) const {
  std::vector<std::string> found, all;
  const ScriptInterface* match = nullptr;
  for (const auto& s : scripts) {
    all.push_back(s.path);
    if (ends_with_component(s.path, path)) {
      found.push_back(s.path);
      match = &s;
    }
  }
  if (found.size() == 1) return match;
  if (found.empty())
    return fail(fmt::format("no script '{}' in the {} {} interface record", path, package, release), source,
                fmt::format("recorded scripts: {}", fmt::join(all, ", ")));
  return fail(fmt::format("'{}' names several scripts of the {} {} interface record", path, package, release),
              source, fmt::format("give more of the path: {}", fmt::join(found, ", ")));
}

const Launcher* Interface::launcher(std::string_view path) const {
  const auto it = std::ranges::find(launchers, path, &Launcher::path);
  return it == launchers.end() ? nullptr : &*it;
}

Result<Interface> parse_interface(std::string_view text, std::string_view source) {
  const Reader r(source);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return fail(fmt::format("not JSON: {}", e.what()), fmt::format("{}: byte {}", source, e.byte),
                Reader::hint());
  }
  Interface out;
  out.source = std::string(source);
  if (auto header = header_of(j, r, out); !header) return std::unexpected(header.error());
  if (auto body = body_of(j, r, out); !body) return std::unexpected(body.error());
  return out;
}

}  // namespace trnslurm::upstream
