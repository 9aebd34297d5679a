#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trnslurm/upstream/args.hpp"
#include "trnslurm/util/parse_number.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm::upstream {

namespace {

// What Python's int() and float() accept from a command-line word (the types argparse applies):
// surrounding whitespace, a sign, digits with single underscores between them; for float a
// fraction, an exponent, inf, infinity and nan in any case.
std::string_view strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Consumes digits with single underscores between them; false when there is no digit.
bool digits(std::string_view& s) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    ++i;
    if (i + 1 < s.size() && s[i] == '_' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
  }
  s.remove_prefix(i);
  return i > 0;
}

void sign(std::string_view& s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
}

bool python_int(std::string_view s) {
  s = strip(s);
  sign(s);
  return digits(s) && s.empty();
}

bool python_float(std::string_view s) {
  s = strip(s);
  sign(s);
  const auto word = lower(s);
  if (word == "inf" || word == "infinity" || word == "nan") return true;
  const bool whole = digits(s);
  bool fraction = false;
  if (!s.empty() && s.front() == '.') {
    s.remove_prefix(1);
    fraction = digits(s);
  }
  if (!whole && !fraction) return false;
  if (!s.empty() && (s.front() == 'e' || s.front() == 'E')) {
    s.remove_prefix(1);
    sign(s);
    if (!digits(s)) return false;
  }
  return s.empty();
}

std::string without_underscores(std::string_view s) {
  std::string out;
  for (char c : strip(s))
    if (c != '_') out += c;
  return out;
}

bool choice_matches(const nlohmann::json& choice, std::string_view value) {
  if (choice.is_string()) return choice.get<std::string>() == value;
  if (choice.is_number_integer() && python_int(value)) {
    const auto digits = without_underscores(value);
    const auto n = parse_number<long long>(std::string_view(digits).substr(digits.starts_with('+') ? 1 : 0));
    return n && *n == choice.get<long long>();
  }
  if (choice.is_number_float() && python_float(value))
    return std::strtod(without_underscores(value).c_str(), nullptr) == choice.get<double>();
  return false;
}

std::string choice_text(const nlohmann::json& choice) {
  return choice.is_string() ? choice.get<std::string>() : choice.dump();
}

bool reads_as_false(std::string_view value) {
  static constexpr std::array<std::string_view, 6> falsy{"false", "0", "no", "off", "", "none"};
  return std::ranges::find(falsy, lower(strip(value))) != falsy.end();
}

ArgProblem problem(ArgIssue issue, std::string what, std::string hint) {
  return ArgProblem{issue, {}, std::move(what), std::move(hint)};
}

ArgProblem bool_problem(const Flag& flag, std::string_view value) {
  const auto& name = flag.names.front();
  const bool false_by_default = flag.default_value.is_null() || flag.default_value == false;
  const std::string off = false_by_default
                              ? fmt::format("leave '{}' out to keep it false (its default)", name)
                              : fmt::format("its default is {}, and no word but an empty one reads as false",
                                            flag.default_value.dump());
  if (value.empty())
    return problem(ArgIssue::bool_false_is_true,
                   fmt::format("'{}' is given an empty word: the only false value its type=bool reads", name),
                   off + " rather than rely on an empty word surviving quoting and templates");
  return problem(
      ArgIssue::bool_false_is_true,
      fmt::format("'{} {}' turns it on: upstream reads '{}' with type=bool, and any non-empty word "
                  "is true (bool('{}') is True)",
                  name, value, name, value),
      off);
}

ArgProblem choice_problem(const Flag& flag, std::string_view value) {
  std::vector<std::string> texts;
  texts.reserve(flag.choices.size());
  for (const auto& c : flag.choices) texts.push_back(choice_text(c));
  auto close = closest_match(value, texts);
  return problem(
      ArgIssue::bad_choice,
      fmt::format("'{}' is not a choice of '{}' ({})", value, flag.names.front(), fmt::join(texts, ", ")),
      close ? fmt::format("did you mean '{}'?", *close) : "upstream stops with 'invalid choice'");
}

// The type a value is read as: a tyro Optional field ("other:int | None") reads the word None as
// None and anything else as its inner type.
ValueType value_type_of(const Flag& flag, std::string_view value) {
  constexpr std::string_view prefix = "other:", suffix = " | None";
  const std::string_view text = flag.type_text;
  if (flag.type != ValueType::other || !text.starts_with(prefix) || !text.ends_with(suffix)) return flag.type;
  if (value == "None") return ValueType::none;
  const auto inner = text.substr(prefix.size(), text.size() - prefix.size() - suffix.size());
  if (inner == "int") return ValueType::integer;
  if (inner == "float") return ValueType::floating;
  return ValueType::other;
}

}  // namespace

std::optional<ArgProblem> check_value(const Flag& flag, std::string_view value) {
  const auto& name = flag.names.front();
  const ValueType type = value_type_of(flag, value);
  if (type == ValueType::boolean && reads_as_false(value)) return bool_problem(flag, value);
  if (type == ValueType::integer && !python_int(value))
    return problem(ArgIssue::bad_type, fmt::format("'{}' is not an int, which '{}' takes", value, name),
                   "upstream stops with 'invalid int value'");
  if (type == ValueType::floating && !python_float(value))
    return problem(ArgIssue::bad_type, fmt::format("'{}' is not a float, which '{}' takes", value, name),
                   "upstream stops with 'invalid float value'");
  if (flag.type == ValueType::other && type == ValueType::none) return std::nullopt;  // None
  if (!flag.choices.empty() &&
      std::ranges::none_of(flag.choices, [&](const auto& c) { return choice_matches(c, value); }))
    return choice_problem(flag, value);
  return std::nullopt;
}

Error to_error(const ArgProblem& p) {
  return Error{p.what, to_string(p.pos), p.hint};
}

}  // namespace trnslurm::upstream
