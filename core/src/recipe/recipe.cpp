// Recipe loading: TOML (toml++) -> overrides -> key check -> typed values -> cross-checks.
// Every error names file:line:column (or the --set that caused it) and how to fix it.
#include "trnslurm/recipe/recipe.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "trnslurm/recipe/instance.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm {

namespace {

// A field of a Slurm time limit: digits only, and small enough that the seconds cannot overflow.
bool time_field(std::string_view text, std::uint64_t& value) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return !text.empty() && ptr == end && ec == std::errc{} && value <= 1'000'000'000;
}

// Seconds of a Slurm time limit ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"); nullopt for
// the partition default (""), UNLIMITED, or text that is not a time limit.
std::optional<std::uint64_t> slurm_time_seconds(std::string_view text) {
  std::uint64_t days = 0;
  const auto dash = text.find('-');
  const bool with_days = dash != std::string_view::npos;  // then the fields are D-H[:M[:S]]
  if (with_days) {
    if (!time_field(text.substr(0, dash), days)) return std::nullopt;
    text.remove_prefix(dash + 1);
  }
  std::array<std::uint64_t, 3> parts{};
  std::size_t n = 0;
  for (;;) {
    const auto colon = text.find(':');
    if (n == parts.size() || !time_field(text.substr(0, colon), parts[n++])) return std::nullopt;
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  std::uint64_t h = 0, m = 0, sec = 0;
  if (with_days || n == 3) {
    h = parts[0];
    m = parts[1];
    sec = parts[2];
  } else {
    m = parts[0];
    sec = parts[1];
  }
  return ((days * 24 + h) * 60 + m) * 60 + sec;
}

void flatten_toml(const toml::table& t, const std::string& prefix, TemplateValues& out) {
  for (const auto& [key, node] : t) {
    const auto name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) {
      flatten_toml(*sub, name, out);
    } else if (const auto* s = node.as_string()) {
      out[name] = s->get();
    } else if (const auto* f = node.as_floating_point()) {
      out[name] = fmt::format("{}", f->get());  // shortest round trip: 1.5e-4 is 0.00015, not 0.000149999...
    } else if (node.is_number() || node.is_boolean() || node.is_date_time() || node.is_date() ||
               node.is_time()) {
      std::ostringstream text;
      node.visit([&](const auto& v) {
        if constexpr (toml::is_value<decltype(v)>) text << v;
      });
      out[name] = text.str();
    }
  }
}

}  // namespace

std::string to_string(const SourcePos& pos) {
  if (pos.line == 0) return pos.file;
  return fmt::format("{}:{}:{}", pos.file, pos.line, pos.column);
}

const StageRecipe& Recipe::stage(std::string_view name) const {
  for (const auto& s : stages)
    if (s.name == name) return s;
  return stages[2];  // unreachable for the names in stage_names
}

std::string Recipe::where(std::string_view key) const {
  if (const auto it = positions.find(std::string(key)); it != positions.end()) return to_string(it->second);
  return source.empty() ? std::string("recipe") : source.string();
}

namespace {

enum class Kind { integer, number, string, boolean, strings, env };

struct KeySpec {
  std::string_view key;
  Kind kind;
};

struct SectionSpec {
  std::string_view name;
  std::vector<KeySpec> keys;
};

const std::vector<SectionSpec>& section_specs() {
  using enum Kind;
  static const std::vector<SectionSpec> specs{
      {"model",
       {{"name", string},
        {"layers", integer},
        {"hidden", integer},
        {"heads", integer},
        {"kv_heads", integer},
        {"ffn_hidden", integer},
        {"vocab", integer},
        {"seq_len", integer},
        {"pretrained", string}}},
      {"cluster", {{"instance", string}, {"nodes", integer}, {"lnc", integer}, {"cores_per_node", integer}}},
      {"train",
       {{"tp", integer},
        {"pp", integer},
        {"gbs", integer},
        {"mbs", integer},
        {"epochs", integer},
        {"lr", number},
        {"warmup_ratio", number},
        {"warmup_steps", integer}}},
      {"dataset", {{"path", string}, {"format", string}, {"split", string}}},
      {"checkpoint",
       {{"dir", string}, {"converted_dir", string}, {"export_dir", string}, {"every", integer}}},
      {"estimate", {{"tokens_per_second_per_node", number}, {"price_per_node_hour", number}}},
      {"run", {{"runs_dir", string}}},
      {"slurm",
       {{"partition", string},
        {"account", string},
        {"qos", string},
        {"exclusive", boolean},
        {"sbatch_args", strings}}},
  };
  return specs;
}

const std::vector<KeySpec>& stage_key_specs() {
  using enum Kind;
  static const std::vector<KeySpec> keys{
      {"enabled", boolean}, {"nodes", integer},        {"time", string},         {"command", string},
      {"env", env},         {"max_restarts", integer}, {"signal_grace", integer}};
  return keys;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::integer:
      return "an integer";
    case Kind::number:
      return "a number";
    case Kind::string:
      return "a string";
    case Kind::boolean:
      return "true or false";
    case Kind::strings:
      return "an array of strings";
    case Kind::env:
      return "a table of strings";
  }
  return "a value";
}

const char* example_for(Kind kind) {
  switch (kind) {
    case Kind::integer:
      return "8";
    case Kind::number:
      return "1.5e-4";
    case Kind::string:
      return "\"text\"";
    case Kind::boolean:
      return "true";
    case Kind::strings:
      return "[\"--arg\"]";
    case Kind::env:
      return "{ NAME = \"value\" }";
  }
  return "";
}

std::vector<std::string> section_names() {
  std::vector<std::string> out;
  for (const auto& s : section_specs()) out.emplace_back(s.name);
  out.emplace_back("stages");
  return out;
}

std::vector<std::string> key_names(const std::vector<KeySpec>& keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.emplace_back(k.key);
  return out;
}

const std::vector<KeySpec>* keys_of_section(std::string_view section) {
  if (section.starts_with("stages.")) {
    const auto stage = section.substr(7);
    if (std::ranges::find(stage_names, stage) == stage_names.end()) return nullptr;
    return &stage_key_specs();
  }
  for (const auto& s : section_specs())
    if (s.name == section) return &s.keys;
  return nullptr;
}

std::optional<Kind> kind_of(std::string_view section, std::string_view key) {
  if (const auto* keys = keys_of_section(section))
    for (const auto& k : *keys)
      if (k.key == key) return k.kind;
  return std::nullopt;
}

// The sections (other than `except`) that hold a key of that name: "tp" -> "train".
std::vector<std::string> sections_holding(std::string_view key, std::string_view except) {
  std::vector<std::string> out;
  for (const auto& s : section_specs())
    if (s.name != except && std::ranges::find(s.keys, key, &KeySpec::key) != s.keys.end())
      out.emplace_back(s.name);
  if (std::ranges::find(stage_key_specs(), key, &KeySpec::key) != stage_key_specs().end() &&
      !except.starts_with("stages."))
    out.emplace_back("stages.<stage>");
  return out;
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

bool has_kind(const toml::node& node, Kind kind) {
  switch (kind) {
    case Kind::integer:
      return node.is_integer();
    case Kind::number:
      return node.is_integer() || node.is_floating_point();
    case Kind::string:
      return node.is_string();
    case Kind::boolean:
      return node.is_boolean();
    case Kind::strings: {
      const auto* array = node.as_array();
      return array != nullptr &&
             std::ranges::all_of(*array, [](const toml::node& n) { return n.is_string(); });
    }
    case Kind::env:
      return node.is_table();
  }
  return false;
}

bool valid_env_name(std::string_view name) {
  if (name.empty() || (std::isdigit(static_cast<unsigned char>(name[0])) != 0)) return false;
  return std::ranges::all_of(
      name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

// Reads values out of the parsed table, remembering where each came from.
class Loader {
 public:
  Loader(toml::table& root, std::string file, std::map<std::string, std::string> overridden)
      : root_(root), file_(std::move(file)), overridden_(std::move(overridden)) {}

  SourcePos pos(const toml::node& node, const std::string& path) const {
    if (const auto it = overridden_.find(path); it != overridden_.end()) return SourcePos{it->second, 0, 0};
    const auto& begin = node.source().begin;
    return SourcePos{file_, begin.line, begin.column};
  }
  SourcePos pos(const toml::key& key, const std::string& path) const {
    if (const auto it = overridden_.find(path); it != overridden_.end()) return SourcePos{it->second, 0, 0};
    const auto& begin = key.source().begin;
    return SourcePos{file_, begin.line, begin.column};
  }

  // Unknown keys, wrong types, misplaced keys.
  Result<void> check_keys() {
    for (auto&& [key, node] : root_) {
      const std::string name(key.str());
      if (name == "stages") {
        if (auto r = check_stages(key, node); !r) return r;
        continue;
      }
      const auto* keys = keys_of_section(name);
      if (keys == nullptr) return unknown_key(key, name, "", section_names());
      if (!node.is_table())
        return fail(fmt::format("'{}' must be a table, got {}", name, type_name(node)),
                    to_string(pos(node, name)), fmt::format("write it as a [{}] section", name));
      if (auto r = check_section(*node.as_table(), name, *keys); !r) return r;
    }
    return {};
  }

  const toml::node* find(std::string_view section, std::string_view key) const {
    const toml::node* node = root_.get(section.substr(0, section.find('.')));
    if (section.starts_with("stages.")) {
      if (node == nullptr || !node->is_table()) return nullptr;
      node = node->as_table()->get(section.substr(7));
    }
    if (node == nullptr || !node->is_table()) return nullptr;
    return node->as_table()->get(key);
  }

  const toml::table* find_table(std::string_view section) const {
    const toml::node* node = root_.get(section.substr(0, section.find('.')));
    if (node != nullptr && section.starts_with("stages.") && node->is_table())
      node = node->as_table()->get(section.substr(7));
    return node == nullptr ? nullptr : node->as_table();
  }

  void remember(std::map<std::string, SourcePos>& positions, std::string_view section,
                std::string_view key) const {
    if (const auto* node = find(section, key)) {
      const std::string path = fmt::format("{}.{}", section, key);
      positions[path] = pos(*node, path);
    }
  }

  // Integer in [lo, hi]; nullopt when absent.
  Result<std::optional<std::uint64_t>> uint_value(std::string_view section, std::string_view key,
                                                  std::uint64_t lo, std::uint64_t hi) const {
    const auto* node = find(section, key);
    if (node == nullptr) return std::optional<std::uint64_t>{};
    const std::int64_t v = node->as_integer()->get();
    const std::string path = fmt::format("{}.{}", section, key);
    if (v < 0 || static_cast<std::uint64_t>(v) < lo || static_cast<std::uint64_t>(v) > hi)
      return fail(
          fmt::format("{} = {} is out of range", path, v), to_string(pos(*node, path)),
          hi == std::numeric_limits<std::uint32_t>::max() || hi == std::numeric_limits<std::uint64_t>::max()
              ? fmt::format("use an integer of at least {}", lo)
              : fmt::format("use an integer from {} to {}", lo, hi));
    return std::optional<std::uint64_t>{static_cast<std::uint64_t>(v)};
  }

  template <class T>
  Result<void> read_uint(T& out, std::string_view section, std::string_view key, std::uint64_t lo = 0,
                         std::uint64_t hi = std::numeric_limits<T>::max()) const {
    auto v = uint_value(section, key, lo, hi);
    if (!v) return std::unexpected(v.error());
    if (*v) out = static_cast<T>(**v);
    return {};
  }

  Result<void> read_number(double& out, std::string_view section, std::string_view key, double lo,
                           double hi) const {
    const auto* node = find(section, key);
    if (node == nullptr) return {};
    const double v = node->is_integer() ? static_cast<double>(node->as_integer()->get())
                                        : node->as_floating_point()->get();
    const std::string path = fmt::format("{}.{}", section, key);
    if (!std::isfinite(v) || v < lo || v > hi)
      return fail(fmt::format("{} = {} is out of range", path, v), to_string(pos(*node, path)),
                  hi == std::numeric_limits<double>::max()
                      ? fmt::format("use a number of at least {}", lo)
                      : fmt::format("use a number from {} to {}", lo, hi));
    out = v;
    return {};
  }

  void read_string(std::string& out, std::string_view section, std::string_view key) const {
    if (const auto* node = find(section, key)) out = node->as_string()->get();
  }

  void read_bool(bool& out, std::string_view section, std::string_view key) const {
    if (const auto* node = find(section, key)) out = node->as_boolean()->get();
  }

  Result<void> require(std::string_view section, std::string_view key, std::string_view example) const {
    if (find(section, key) != nullptr) return {};
    const auto* table = find_table(section);
    const std::string where =
        table != nullptr
            ? to_string(SourcePos{file_, table->source().begin.line, table->source().begin.column})
            : file_;
    return fail(fmt::format("missing {}.{}", section, key), where,
                table != nullptr ? fmt::format("add `{} = {}` to the [{}] section", key, example, section)
                                 : fmt::format("add a [{}] section with `{} = {}`", section, key, example));
  }

  const std::string& file() const { return file_; }

 private:
  Result<void> unknown_key(const toml::key& key, const std::string& name, const std::string& section,
                           const std::vector<std::string>& candidates) const {
    const std::string path = section.empty() ? name : section + "." + name;
    const std::string what = section.empty() ? fmt::format("unknown section '{}'", name)
                                             : fmt::format("unknown key '{}' in [{}]", name, section);
    std::string hint;
    if (auto close = closest_match(name, candidates)) {
      hint = fmt::format("did you mean '{}'?", *close);
    } else if (auto homes = sections_holding(name, section); !homes.empty()) {
      hint = fmt::format("'{}' belongs in [{}]", name, join(homes));
    } else {
      hint = fmt::format("valid {}: {}", section.empty() ? "sections" : "keys", join(candidates));
    }
    return fail(what, to_string(pos(key, path)), hint);
  }

  Result<void> check_section(const toml::table& table, const std::string& section,
                             const std::vector<KeySpec>& keys) {
    for (auto&& [key, node] : table) {
      const std::string name(key.str());
      const auto it = std::ranges::find(keys, name, &KeySpec::key);
      if (it == keys.end()) return unknown_key(key, name, section, key_names(keys));
      const std::string path = fmt::format("{}.{}", section, name);
      if (!has_kind(node, it->kind)) {
        std::string hint = fmt::format("write it as `{} = {}`", name, example_for(it->kind));
        if (node.is_string() && (it->kind == Kind::integer || it->kind == Kind::number))
          hint = fmt::format("remove the quotes: `{} = {}`", name, node.as_string()->get());
        return fail(fmt::format("{} must be {}, got {}", path, kind_name(it->kind), type_name(node)),
                    to_string(pos(node, path)), hint);
      }
      if (it->kind == Kind::env) {
        for (auto&& [var, value] : *node.as_table()) {
          const std::string var_name(var.str());
          const std::string var_path = fmt::format("{}.{}", path, var_name);
          if (!valid_env_name(var_name))
            return fail(fmt::format("'{}' is not a valid environment variable name", var_name),
                        to_string(pos(var, var_path)),
                        "use letters, digits and '_', not starting with a digit");
          if (!value.is_string())
            return fail(fmt::format("{} must be a string, got {}", var_path, type_name(value)),
                        to_string(pos(value, var_path)), fmt::format("quote it: {} = \"...\"", var_name));
        }
      }
    }
    return {};
  }

  Result<void> check_stages(const toml::key& key, toml::node& node) {
    if (!node.is_table())
      return fail("'stages' must be a table", to_string(pos(key, "stages")),
                  "write stages as [stages.train] sections");
    std::vector<std::string> names(stage_names.begin(), stage_names.end());
    for (auto&& [stage_key, stage] : *node.as_table()) {
      const std::string name(stage_key.str());
      if (std::ranges::find(stage_names, name) == stage_names.end())
        return unknown_key(stage_key, name, "stages", names);
      if (!stage.is_table())
        return fail(fmt::format("stages.{} must be a table", name), to_string(pos(stage, "stages." + name)),
                    fmt::format("write it as a [stages.{}] section", name));
      if (auto r = check_section(*stage.as_table(), "stages." + name, stage_key_specs()); !r) return r;
    }
    return {};
  }

  toml::table& root_;
  std::string file_;
  std::map<std::string, std::string> overridden_;  // path -> option that set it
};

// Turns the text of a --set value into a TOML node of the kind the key expects.
std::string origin_of(const Override& o) {
  return o.origin.empty() ? "--set " + o.key : o.origin;
}

Result<toml::table> override_value(const Override& o, Kind kind) {
  const std::string where = origin_of(o);
  const auto bad = [&](std::string_view expected, std::string hint) {
    return fail(fmt::format("'{}' is not {} ({} must be {})", o.value, expected, o.key, expected), where,
                std::move(hint));
  };
  toml::table holder;
  switch (kind) {
    case Kind::integer: {
      std::int64_t v = 0;
      const auto* end = o.value.data() + o.value.size();
      const auto [ptr, ec] = std::from_chars(o.value.data(), end, v);
      if (ec != std::errc{} || ptr != end || o.value.empty())
        return bad("an integer", fmt::format("e.g. --set {}=8", o.key));
      holder.insert("v", v);
      break;
    }
    case Kind::number: {
      double v = 0;
      const auto* end = o.value.data() + o.value.size();
      const auto [ptr, ec] = std::from_chars(o.value.data(), end, v);
      if (ec != std::errc{} || ptr != end || o.value.empty() || !std::isfinite(v))
        return bad("a number", fmt::format("e.g. --set {}=1.5e-4", o.key));
      holder.insert("v", v);
      break;
    }
    case Kind::boolean:
      if (o.value != "true" && o.value != "false")
        return bad("true or false", fmt::format("--set {}=true or --set {}=false", o.key, o.key));
      holder.insert("v", o.value == "true");
      break;
    case Kind::string:
      holder.insert("v", o.value);
      break;
    case Kind::strings:
    case Kind::env: {
      toml::table parsed;
      try {
        parsed = toml::parse("v = " + o.value);
      } catch (const toml::parse_error&) {
        return bad(kind_name(kind), kind == Kind::strings
                                        ? fmt::format("e.g. --set '{}=[\"--arg\", \"value\"]'", o.key)
                                        : fmt::format("e.g. --set '{}={{ NAME = \"value\" }}'", o.key));
      }
      const auto* node = parsed.get("v");
      if (node == nullptr || !has_kind(*node, kind))
        return bad(kind_name(kind), kind == Kind::strings
                                        ? fmt::format("e.g. --set '{}=[\"--arg\", \"value\"]'", o.key)
                                        : fmt::format("e.g. --set '{}={{ NAME = \"value\" }}'", o.key));
      holder.insert("v", *node);
      break;
    }
  }
  return holder;
}

std::vector<std::string> all_keys() {
  std::vector<std::string> out;
  for (const auto& s : section_specs())
    for (const auto& k : s.keys) out.push_back(fmt::format("{}.{}", s.name, k.key));
  for (const auto stage : stage_names)
    for (const auto& k : stage_key_specs()) out.push_back(fmt::format("stages.{}.{}", stage, k.key));
  return out;
}

// Applies one override to the table; returns the path it set.
Result<std::string> apply_override(toml::table& root, const Override& o) {
  const std::string where = origin_of(o);
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto dot = o.key.find('.', start);
    parts.push_back(o.key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // section.key, stages.<stage>.key, or stages.<stage>.env.NAME
  std::string section;
  std::string key;
  std::optional<std::string> env_var;
  if (parts.size() == 2) {
    section = parts[0];
    key = parts[1];
  } else if ((parts.size() == 3 || parts.size() == 4) && parts[0] == "stages") {
    section = parts[0] + "." + parts[1];
    key = parts[2];
    if (parts.size() == 4) {
      if (key != "env")
        return fail(fmt::format("unknown key '{}'", o.key), where,
                    "only stages.<stage>.env.NAME has four parts");
      env_var = parts[3];
    }
  }
  const auto kind = kind_of(section, key);
  if (!kind) {
    std::string hint = "use section.key, e.g. --set train.tp=8; see docs/recipe.md";
    if (auto close = closest_match(o.key, all_keys())) hint = fmt::format("did you mean '{}'?", *close);
    return fail(fmt::format("unknown recipe key '{}'", o.key), where, hint);
  }
  toml::table* table = &root;
  std::vector<std::string> path_to_table{parts[0]};
  if (section.starts_with("stages.")) path_to_table.push_back(parts[1]);
  if (env_var) path_to_table.emplace_back("env");
  std::string walked;
  for (const auto& part : path_to_table) {
    walked += walked.empty() ? part : "." + part;
    auto [it, inserted] = table->emplace<toml::table>(part);
    (void)inserted;
    table = it->second.as_table();
    if (table == nullptr)
      return fail(fmt::format("cannot set {}: '{}' in the recipe is not a table", o.key, walked), where,
                  "fix the recipe first");
  }
  if (env_var) {
    if (!valid_env_name(*env_var))
      return fail(fmt::format("'{}' is not a valid environment variable name", *env_var), where,
                  "use letters, digits and '_', not starting with a digit");
    table->insert_or_assign(*env_var, o.value);
    return o.key;
  }
  auto value = override_value(o, *kind);
  if (!value) return std::unexpected(value.error());
  table->insert_or_assign(key, *value->get("v"));
  return o.key;
}

Result<void> chain(std::initializer_list<Result<void>> results) {
  for (const auto& r : results)
    if (!r) return r;
  return {};
}

// A hand-written check rather than std::regex: compiling the pattern cost a third of `submit`.
bool valid_slurm_time(std::string_view time) {
  return time.empty() || time == "UNLIMITED" || time == "unlimited" || time == "infinite" ||
         slurm_time_seconds(time).has_value();
}

Result<Recipe> build(toml::table& root, const std::string& file,
                     std::map<std::string, std::string> overridden) {
  Loader in(root, file, std::move(overridden));
  if (auto r = in.check_keys(); !r) return std::unexpected(r.error());

  for (const auto& [section, key, example] :
       std::initializer_list<std::tuple<std::string_view, std::string_view, std::string_view>>{
           {"model", "layers", "32"},
           {"model", "hidden", "4096"},
           {"model", "heads", "32"},
           {"model", "vocab", "32000"},
           {"model", "seq_len", "4096"},
           {"cluster", "instance", "\"trn1.32xlarge\""},
           {"cluster", "nodes", "4"},
           {"train", "gbs", "1024"},
           {"train", "lr", "3e-4"}})
    if (auto r = in.require(section, key, example); !r) return std::unexpected(r.error());

  Recipe recipe;
  recipe.source = file;
  auto& m = recipe.model;
  in.read_string(m.name, "model", "name");
  in.read_string(m.pretrained, "model", "pretrained");
  auto& c = recipe.cluster;
  in.read_string(c.instance, "cluster", "instance");
  auto& t = recipe.train;
  if (auto r = chain(
          {in.read_uint(m.layers, "model", "layers", 1, 100000),
           in.read_uint(m.hidden, "model", "hidden", 1, 1u << 24),
           in.read_uint(m.heads, "model", "heads", 1, 1u << 16),
           in.read_uint(m.kv_heads, "model", "kv_heads", 1, 1u << 16),
           in.read_uint(m.ffn_hidden, "model", "ffn_hidden", 1, 1u << 26),
           in.read_uint(m.vocab, "model", "vocab", 1, 1u << 26),
           in.read_uint(m.seq_len, "model", "seq_len", 1, 1u << 24),
           in.read_uint(c.nodes, "cluster", "nodes", 1, 100000), in.read_uint(c.lnc, "cluster", "lnc", 1, 2),
           in.read_uint(t.tp, "train", "tp", 1, 1u << 16), in.read_uint(t.pp, "train", "pp", 1, 1u << 16),
           in.read_uint(t.gbs, "train", "gbs", 1, std::uint64_t{1} << 32),
           in.read_uint(t.mbs, "train", "mbs", 1, std::uint64_t{1} << 24),
           in.read_uint(t.epochs, "train", "epochs", 1, 1000000), in.read_number(t.lr, "train", "lr", 0, 10),
           in.read_number(t.warmup_ratio, "train", "warmup_ratio", 0, 1),
           in.read_uint(recipe.checkpoint.every, "checkpoint", "every"),
           in.read_number(recipe.estimate.tokens_per_second_per_node, "estimate",
                          "tokens_per_second_per_node", 0, std::numeric_limits<double>::max()),
           in.read_number(recipe.estimate.price_per_node_hour, "estimate", "price_per_node_hour", 0,
                          std::numeric_limits<double>::max())});
      !r)
    return std::unexpected(r.error());
  {
    auto v = in.uint_value("cluster", "cores_per_node", 1, 1u << 16);
    if (!v) return std::unexpected(v.error());
    if (*v) c.cores_per_node = static_cast<std::uint32_t>(**v);
    auto w = in.uint_value("train", "warmup_steps", 0, std::numeric_limits<std::uint64_t>::max());
    if (!w) return std::unexpected(w.error());
    t.warmup_steps = *w;
  }
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.ffn_hidden == 0) {
    // Llama: 2/3 of 4 x hidden, rounded up to a multiple of 256 (7B: 11008, 13B: 13824).
    const std::uint64_t raw = (std::uint64_t{8} * m.hidden + 2) / 3;
    m.ffn_hidden = static_cast<std::uint32_t>((raw + 255) / 256 * 256);
  }
  in.read_string(recipe.dataset.path, "dataset", "path");
  in.read_string(recipe.dataset.format, "dataset", "format");
  in.read_string(recipe.dataset.split, "dataset", "split");
  in.read_string(recipe.checkpoint.dir, "checkpoint", "dir");
  in.read_string(recipe.checkpoint.converted_dir, "checkpoint", "converted_dir");
  in.read_string(recipe.checkpoint.export_dir, "checkpoint", "export_dir");
  in.read_string(recipe.run.runs_dir, "run", "runs_dir");
  in.read_string(recipe.slurm.partition, "slurm", "partition");
  in.read_string(recipe.slurm.account, "slurm", "account");
  in.read_string(recipe.slurm.qos, "slurm", "qos");
  in.read_bool(recipe.slurm.exclusive, "slurm", "exclusive");
  if (const auto* args = in.find("slurm", "sbatch_args"))
    for (const auto& a : *args->as_array()) recipe.slurm.sbatch_args.emplace_back(a.as_string()->get());

  for (const auto& s : section_specs())
    for (const auto& k : s.keys) in.remember(recipe.positions, s.name, k.key);

  // Relative paths written in the recipe are relative to the recipe's directory; those given on
  // the command line, to the current directory. Jobs get absolute paths whatever their cwd.
  for (auto [key, value] : std::initializer_list<std::pair<const char*, std::string*>>{
           {"dataset.path", &recipe.dataset.path},
           {"model.pretrained", &recipe.model.pretrained},
           {"checkpoint.dir", &recipe.checkpoint.dir},
           {"checkpoint.converted_dir", &recipe.checkpoint.converted_dir},
           {"checkpoint.export_dir", &recipe.checkpoint.export_dir},
           {"run.runs_dir", &recipe.run.runs_dir}}) {
    if (value->empty() || value->find("://") != std::string::npos) continue;
    const std::filesystem::path given(*value);
    if (given.is_absolute()) continue;
    const auto it = recipe.positions.find(key);
    const bool from_command_line = it != recipe.positions.end() && it->second.line == 0;
    std::filesystem::path base =
        from_command_line ? std::filesystem::path{} : std::filesystem::path(file).parent_path();
    std::error_code ec;
    base = std::filesystem::absolute(base.empty() ? std::filesystem::path(".") : base, ec);
    if (ec) continue;
    *value = (base / given).lexically_normal().string();
  }

  // Cross-checks.
  const auto at = [&](std::string_view key) { return recipe.where(key); };
  const auto* instance = find_instance(c.instance);
  if (instance == nullptr) {
    std::vector<std::string> names;
    for (const auto& i : known_instances()) names.emplace_back(i.name);
    auto close = closest_match(c.instance, names);
    return fail(
        fmt::format("unknown instance type '{}'", c.instance), at("cluster.instance"),
        close ? fmt::format("did you mean '{}'?", *close) : fmt::format("use one of: {}", join(names)));
  }
  if (c.lnc == 0) c.lnc = instance->default_lnc;
  if (auto cpn = cores_per_node(*instance, c.lnc, c.cores_per_node); !cpn) {
    // Point at cores_per_node when it was written, else at the instance that needs it.
    const std::string key =
        recipe.positions.contains(cpn.error().where) ? cpn.error().where : "cluster.instance";
    return fail(cpn.error().what, at(key), cpn.error().hint);
  } else {
    c.cores_per_node = *cpn;
  }
  if (m.hidden % m.heads != 0)
    return fail(fmt::format("hidden = {} is not a multiple of heads = {}", m.hidden, m.heads),
                at("model.hidden"), "the head size is hidden / heads: check the model's config.json");
  if (m.heads % m.kv_heads != 0)
    return fail(fmt::format("heads = {} is not a multiple of kv_heads = {}", m.heads, m.kv_heads),
                at("model.kv_heads"), "grouped-query attention needs heads to be a multiple of kv_heads");
  if (t.warmup_steps && recipe.positions.contains("train.warmup_ratio")) {
    // An override on the command line wins over the other form written in the file.
    const bool steps_overridden = recipe.positions["train.warmup_steps"].line == 0;
    const bool ratio_overridden = recipe.positions["train.warmup_ratio"].line == 0;
    if (ratio_overridden && !steps_overridden) t.warmup_steps.reset();
  }
  if (t.warmup_steps && recipe.positions.contains("train.warmup_ratio") &&
      recipe.positions["train.warmup_steps"].line != 0 && recipe.positions["train.warmup_ratio"].line != 0)
    return fail("both warmup_steps and warmup_ratio are set", at("train.warmup_steps"),
                "keep one: warmup_steps (fixed) or warmup_ratio (of one epoch)");
  static const std::vector<std::string> formats{"auto", "hf", "hf-dict", "megatron", "arrow"};
  if (std::ranges::find(formats, recipe.dataset.format) == formats.end()) {
    auto close = closest_match(recipe.dataset.format, formats);
    return fail(
        fmt::format("unknown dataset format '{}'", recipe.dataset.format), at("dataset.format"),
        close ? fmt::format("did you mean '{}'?", *close) : fmt::format("use one of: {}", join(formats)));
  }
  if (recipe.run.runs_dir.empty())
    return fail("run.runs_dir is empty", at("run.runs_dir"), "give a directory, e.g. runs_dir = \"runs\"");

  for (std::size_t i = 0; i < stage_names.size(); ++i) {
    auto& stage = recipe.stages[i];
    const std::string name(stage_names[i]);
    const std::string section = "stages." + name;
    stage.name = name;
    stage.nodes = (name == "precompile" || name == "train") ? c.nodes : 1;
    in.read_bool(stage.enabled, section, "enabled");
    in.read_string(stage.time, section, "time");
    in.read_string(stage.command, section, "command");
    if (auto r = in.read_uint(stage.nodes, section, "nodes", 1, 100000); !r)
      return std::unexpected(r.error());
    for (const auto& k : stage_key_specs()) in.remember(recipe.positions, section, k.key);
    // Resilience (docs/resilience.md) is the train stage's: the others are short and restartable
    // by submitting again.
    for (const auto* key : {"max_restarts", "signal_grace"})
      if (name != "train" && in.find(section, key) != nullptr)
        return fail(fmt::format("{} applies to the train stage only", key), at(section + "." + key),
                    "move it to [stages.train]");
    if (auto r = in.read_uint(stage.max_restarts, section, "max_restarts", 0, 1000); !r)
      return std::unexpected(r.error());
    if (auto r = in.read_uint(stage.signal_grace, section, "signal_grace", 0, 65535); !r)
      return std::unexpected(r.error());
    if (const auto limit = slurm_time_seconds(stage.time);
        name == "train" && stage.signal_grace > 0 && limit && *limit <= stage.signal_grace)
      return fail(
          fmt::format("signal_grace {} s is not shorter than the train stage's time limit '{}' ({} s): "
                      "the signal would come at once",
                      stage.signal_grace, stage.time, *limit),
          at(section + ".signal_grace"),
          "make signal_grace smaller than the time limit, or 0 to send no signal");
    if (const auto* env = in.find(section, "env"))
      for (auto&& [var, value] : *env->as_table())
        stage.env.emplace(std::string(var.str()), value.as_string()->get());
    const auto* table = in.find_table(section);
    if (const auto it = recipe.positions.find(section + ".command"); it != recipe.positions.end())
      stage.command_pos = it->second;
    else
      stage.command_pos = table != nullptr
                              ? SourcePos{file, table->source().begin.line, table->source().begin.column}
                              : SourcePos{file, 0, 0};
    if (!valid_slurm_time(stage.time))
      return fail(fmt::format("'{}' is not a Slurm time limit", stage.time), at(section + ".time"),
                  "use minutes, HH:MM:SS or D-HH:MM:SS, e.g. time = \"04:00:00\"");
    if ((name == "precompile" || name == "train") && stage.nodes != c.nodes)
      return fail(fmt::format("{}.nodes = {} differs from cluster.nodes = {}", section, stage.nodes, c.nodes),
                  at(section + ".nodes"),
                  "the plan is computed for cluster.nodes: remove the stage's nodes and set cluster.nodes "
                  "(or --nodes)");
    if (stage.enabled && stage.command.find_first_not_of(" \t\r\n") == std::string::npos)
      return fail(fmt::format("stage {} is enabled but has no command", name),
                  table != nullptr ? to_string(stage.command_pos) : file,
                  fmt::format("set command under [{}], or enabled = false", section));
  }
  return recipe;
}

}  // namespace

Result<Override> parse_override(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail(fmt::format("'{}' is not section.key=value", text), "--set",
                "e.g. --set train.tp=8 or --set dataset.path=/data/train");
  Override o{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)), {}};
  if (o.key.find('.') == std::string::npos)
    return fail(fmt::format("'{}' has no section", o.key), "--set " + o.key,
                "write section.key, e.g. --set train.tp=8");
  return o;
}

std::vector<std::string> recipe_keys() {
  return all_keys();
}

Result<Recipe> load_recipe_text(std::string_view text, const std::string& source_name,
                                const std::vector<Override>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return fail(std::string(e.description()), to_string(SourcePos{source_name, begin.line, begin.column}),
                "fix the TOML syntax (https://toml.io)");
  }
  std::map<std::string, std::string> overridden;
  for (const auto& o : overrides) {
    auto path = apply_override(root, o);
    if (!path) return std::unexpected(path.error());
    overridden[*path] = origin_of(o);
  }
  auto recipe = build(root, source_name, std::move(overridden));
  if (!recipe) return recipe;
  flatten_toml(root, "", recipe->values);
  if (overrides.empty()) {
    recipe->text = std::string(text);
  } else {
    std::ostringstream out;
    // Keys only: a value may hold a newline, which would end the comment.
    out << "# resolved from " << source_name << " with overrides of:";
    for (const auto& o : overrides) out << " " << o.key;
    out << "\n" << root << "\n";
    recipe->text = out.str();
  }
  return recipe;
}

Result<Recipe> load_recipe(const std::filesystem::path& path, const std::vector<Override>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail("cannot read the recipe", path.string(),
                "create one with `trnslurm init NAME` (see `trnslurm recipes`) or give -r PATH");
  // A recipe is a few kilobytes; refusing anything beyond 1 MiB keeps `-r /dev/zero` or a
  // dataset passed by mistake from being read into memory.
  constexpr std::size_t max_size = std::size_t{1} << 20;
  // Read in chunks: allocating (and zeroing) the 1 MiB cap up front cost every command ~0.4 ms.
  std::string text;
  std::array<char, 16384> chunk{};
  while (in && text.size() <= max_size) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > max_size)
    return fail("the recipe is larger than 1 MiB", path.string(),
                "check the path: a recipe is a small TOML file");
  auto recipe = load_recipe_text(text, path.string(), overrides);
  if (recipe) recipe->source = path;
  return recipe;
}

}  // namespace trnslurm
