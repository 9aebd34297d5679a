#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trnslurm/upstream/args.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm::upstream {

namespace {

// argparse takes a word starting with '-' as an option unless it reads as a negative number
// (^-\d+$ or ^-\d*\.\d+$; none of the recorded parsers has an option that looks like one).
bool negative_number(std::string_view w) {
  if (w.size() < 2 || w[0] != '-') return false;
  w.remove_prefix(1);
  const auto dot = w.find('.');
  const auto all_digits = [](std::string_view s) {
    return std::ranges::all_of(s, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (dot == std::string_view::npos) return all_digits(w);
  return all_digits(w.substr(0, dot)) && dot + 1 < w.size() && all_digits(w.substr(dot + 1));
}

bool option_like(const ArgWord& w) {
  return w.text.size() > 1 && w.text[0] == '-' && !negative_number(w.text);
}

std::string file_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

SourcePos shifted(SourcePos pos, std::size_t columns) {
  pos.column += static_cast<std::uint32_t>(columns);
  return pos;
}

struct Resolved {
  const Flag* flag = nullptr;
  std::vector<std::string> prefixed;  // the options a non-exact name is a prefix of
};

class Walk {
 public:
  Walk(const ScriptInterface& script, const CheckOptions& options)
      : script_(script),
        options_(options),
        name_(options.script.empty() ? file_name(script.path) : options.script) {
    for (const auto& f : script.flags)
      if (f.positional()) positionals_.push_back(&f);
  }

  void run(std::span<const ArgWord> words) {
    bool options_end = false;
    for (std::size_t i = 0; i < words.size();) {
      if (!options_end && words[i].text == "--") {
        options_end = true;
        ++i;
      } else if (options_end || !option_like(words[i])) {
        positional(words[i++]);
      } else {
        i = option(words, i);
      }
    }
    if (options_.require) missing_required();
  }

  std::vector<GivenFlag> given;
  std::vector<ArgProblem> problems;

 private:
  void report(ArgIssue issue, const SourcePos& pos, std::string what, std::string hint) {
    problems.push_back({issue, pos, std::move(what), std::move(hint)});
  }

  std::string consequence() const {
    return script_.parse == ParseMode::strict
               ? fmt::format("{} parses its arguments strictly and stops with 'unrecognized arguments'",
                             name_)
               : fmt::format(
                     "{} reads its arguments with parse_known_args and would ignore it without a word",
                     name_);
  }

  Resolved resolve(std::string_view name) const {
    if (const Flag* f = script_.find(name)) return {f, {}};
    Resolved r;
    if (!name.starts_with("--") || !script_.allow_abbrev) return r;
    for (const auto& option : script_.option_names())
      if (option.starts_with(name)) r.prefixed.push_back(option);
    if (r.prefixed.size() == 1) r.flag = script_.find(r.prefixed.front());
    return r;
  }

  bool given_before(const Flag* f) const {
    return std::ranges::any_of(given, [&](const GivenFlag& g) { return g.flag == f; });
  }

  std::size_t option(std::span<const ArgWord> words, std::size_t i) {
    const ArgWord& w = words[i];
    const auto eq = w.text.starts_with("--") ? w.text.find('=') : std::string::npos;
    GivenFlag g{nullptr, {w.text.substr(0, eq), w.pos}, {}};
    std::optional<ArgWord> inline_value;
    if (eq != std::string::npos) inline_value = ArgWord{w.text.substr(eq + 1), shifted(w.pos, eq + 1)};
    const Resolved r = resolve(g.option.text);
    if (!r.flag) return unknown(words, i, g.option, r, inline_value.has_value());
    g.flag = r.flag;
    if (r.prefixed.size() == 1)
      report(
          ArgIssue::abbreviation, w.pos,
          fmt::format("'{}' abbreviates '{}'", g.option.text, r.prefixed.front()),
          "write the full name: argparse takes a unique prefix, but a flag a later release adds can make it "
          "ambiguous");
    if (given_before(g.flag) && !g.flag->repeatable())
      report(ArgIssue::repeated_flag, w.pos, fmt::format("'{}' is given twice", g.option.text),
             "give it once: upstream keeps only the last one");
    const std::size_t next = g.flag->takes_value() ? values(words, i + 1, g, inline_value)
                                                   : switch_alone(words, i + 1, g, inline_value);
    given.push_back(std::move(g));
    return next;
  }

  std::size_t unknown(std::span<const ArgWord> words, std::size_t i, const ArgWord& option, const Resolved& r,
                      bool has_inline_value) {
    if (r.prefixed.size() > 1) {
      report(ArgIssue::ambiguous_flag, option.pos,
             fmt::format("'{}' is a prefix of several flags of {}: {}", option.text, name_,
                         fmt::join(r.prefixed, ", ")),
             "write the full name: upstream stops with 'ambiguous option'");
    } else {
      const auto close = closest_match(option.text, script_.option_names());
      report(ArgIssue::unknown_flag, option.pos, fmt::format("'{}' is not a flag of {}", option.text, name_),
             close ? fmt::format("{}; did you mean '{}'?", consequence(), *close) : consequence());
    }
    // Its value, if it has one, goes with it rather than being reported again as a stray word.
    const bool value_follows = !has_inline_value && i + 1 < words.size() && !option_like(words[i + 1]);
    return i + (value_follows ? 2 : 1);
  }

  std::size_t switch_alone(std::span<const ArgWord> words, std::size_t i, const GivenFlag& g,
                           const std::optional<ArgWord>& inline_value) {
    const auto& option = g.option.text;
    if (inline_value) {
      report(ArgIssue::switch_with_value, inline_value->pos,
             fmt::format("'{}' is a switch ({}) of {} and takes no value", option, g.flag->action, name_),
             fmt::format("write '{}' alone to turn it on, leave it out to keep it off: upstream stops with "
                         "'ignored explicit argument'",
                         option));
      return i;
    }
    if (i >= words.size() || option_like(words[i]) || positional_free()) return i;
    report(ArgIssue::switch_with_value, words[i].pos,
           fmt::format("'{}' is a switch ({}) of {} and takes no value: '{}' would be read as a separate "
                       "argument",
                       option, g.flag->action, name_, words[i].text),
           fmt::format("write '{}' alone to turn it on, leave it out to keep it off; {}", option,
                       script_.parse == ParseMode::strict ? "upstream stops with 'unrecognized arguments'"
                                                          : "upstream ignores the word silently"));
    return i + 1;
  }

  std::size_t values(std::span<const ArgWord> words, std::size_t i, GivenFlag& g,
                     const std::optional<ArgWord>& inline_value) {
    const Flag& f = *g.flag;
    if (inline_value) {
      g.values.push_back(*inline_value);
    } else {
      const auto most = f.max_values().value_or(words.size());
      while (i < words.size() && g.values.size() < most && !option_like(words[i]))
        g.values.push_back(words[i++]);
    }
    if (g.values.size() < f.min_values()) {
      const std::string after =
          i < words.size() ? fmt::format("is followed by '{}'", words[i].text) : "ends the list";
      report(ArgIssue::missing_value, g.option.pos,
             fmt::format("'{}' takes a value ({}) but {}", g.option.text,
                         f.type_text.empty() ? "str" : f.type_text, after),
             "give its value after it: upstream stops with 'expected one argument'");
    }
    for (const auto& v : g.values) check_literal(f, v);
    return i;
  }

  void check_literal(const Flag& f, const ArgWord& v) {
    if (has_placeholder(v.text)) return;  // the caller checks the rendered value (check_value)
    if (auto p = check_value(f, v.text)) {
      p->pos = v.pos;
      problems.push_back(std::move(*p));
    }
  }

  bool positional_free() const { return next_positional_ < positionals_.size(); }

  void positional(const ArgWord& w) {
    if (positional_free()) {
      const Flag* f = positionals_[next_positional_];
      if (f->max_values()) ++next_positional_;  // "*" and "+" take every word left
      check_literal(*f, w);
      given.push_back({f, w, {w}});
      return;
    }
    report(
        ArgIssue::unexpected_positional, w.pos,
        fmt::format("'{}' is not the value of any flag, and {} takes no positional arguments", w.text, name_),
        script_.parse == ParseMode::strict
            ? "upstream stops with 'unrecognized arguments'; is a flag missing before it?"
            : "upstream ignores it without a word; is a flag missing before it?");
  }

  void missing_required() {
    for (const auto& f : script_.flags) {
      const bool required = f.required || (f.positional() && f.min_values() > 0);
      if (!required || given_before(&f)) continue;
      report(ArgIssue::missing_required, options_.where,
             fmt::format("{} requires '{}'", name_, f.names.front()),
             fmt::format("add '{} VALUE': upstream stops with 'the following arguments are required'",
                         f.names.front()));
    }
  }

  const ScriptInterface& script_;
  const CheckOptions& options_;
  std::string name_;
  std::vector<const Flag*> positionals_;
  std::size_t next_positional_ = 0;
};

}  // namespace

std::vector<ArgProblem> check_args(const ScriptInterface& script, std::span<const ArgWord> words,
                                   const CheckOptions& options) {
  Walk walk(script, options);
  walk.run(words);
  return std::move(walk.problems);
}

std::vector<GivenFlag> given_flags(const ScriptInterface& script, std::span<const ArgWord> words) {
  CheckOptions options;
  options.require = false;
  Walk walk(script, options);
  walk.run(words);
  return std::move(walk.given);
}

}  // namespace trnslurm::upstream
