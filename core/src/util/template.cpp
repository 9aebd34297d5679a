#include "trnslurm/util/template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ranges>
#include <vector>

#include "trnslurm/util/printable.hpp"

namespace trnslurm {
namespace {

// file:line:column of byte `offset` of a template that starts at `origin`.
std::string where_in(std::string_view text, std::size_t offset, const TextOrigin& origin) {
  std::uint32_t line = origin.line;
  std::uint32_t column = origin.column;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}:{}", origin.file.empty() ? "<template>" : origin.file, line, column);
}

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool is_placeholder_name(std::string_view name) {
  if (name.empty() || !is_name_start(name.front())) return false;
  for (char c : name) {
    if (!is_name_char(c) && c != '.') return false;
  }
  return name.back() != '.';
}

// What an arithmetic context may receive: a decimal integer bash reads as written (no leading
// zero, which bash would read as octal).
bool is_whole_number(std::string_view v) {
  if (v.starts_with('-')) v.remove_prefix(1);
  if (v.empty() || v.size() > 18 || (v.size() > 1 && v.front() == '0')) return false;
  return std::ranges::all_of(v, [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool is_shell_name(std::string_view name) {
  if (name.empty() || !is_name_start(name.front())) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

Result<std::string> shell_word(std::string_view value) {
  constexpr std::string_view plain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/@+=";
  if (!value.empty() && value.find_first_not_of(plain) == std::string_view::npos) return std::string(value);
  return shell_quote(value);
}

Result<std::string> shell_quote(std::string_view value) {
  std::string out = "'";
  out.reserve(value.size() + 2);
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c == 0) {
      return fail("a value holds a NUL byte, which no shell word can carry", fmt::format("byte {}", i),
                  "remove the NUL byte from the value");
    }
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      return fail(fmt::format("a value holds the control character 0x{:02x}", c), fmt::format("byte {}", i),
                  "only tab and newline are allowed among control characters; remove it");
    }
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '\'';
  return out;
}

std::string variable_for(std::string_view name) {
  std::string out = "TRNSLURM_";
  for (char c : name) out += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

namespace {

// Bash's quoting context at a point of a script, approximately: enough to choose the nicest
// variable reference. A misjudged context costs word splitting, never execution.
class QuoteTracker {
 public:
  enum class Context { unquoted, single, double_quoted };

  // Inside $(( )) or (( )): bash evaluates the expanded text of a value there as arithmetic,
  // which expands array subscripts again: a value `a[$(cmd)]` would run cmd, whatever its quotes.
  // Double quotes and parentheses inside the expression do not end it; a command substitution does.
  bool in_arithmetic() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (*it == Frame::arithmetic) return true;
      if (*it != Frame::double_quoted && *it != Frame::arith_paren) return false;
    }
    return false;
  }

  Context context() const {
    switch (stack_.back()) {
      case Frame::single:
      case Frame::ansi_c:
        return Context::single;
      case Frame::double_quoted:
        return Context::double_quoted;
      default:
        return Context::unquoted;
    }
  }

  // Feeds text[i]; returns how many characters were consumed (2 for an escape).
  std::size_t feed(std::string_view text, std::size_t i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    auto& top = stack_.back();
    switch (top) {
      case Frame::comment:
        if (c == '\n') stack_.pop_back();
        return 1;
      case Frame::single:
        if (c == '\'') stack_.pop_back();
        return 1;
      case Frame::ansi_c:
        if (c == '\\') return 2;
        if (c == '\'') stack_.pop_back();
        return 1;
      case Frame::double_quoted:
        if (c == '\\') return 2;
        if (c == '"') {
          stack_.pop_back();
          return 1;
        }
        return open_substitution(text, i);
      case Frame::backtick:
        if (c == '`') {
          stack_.pop_back();
          return 1;
        }
        return unquoted(text, i);
      case Frame::command_sub:
        if (c == ')') {
          stack_.pop_back();
          return 1;
        }
        if (c == '(' && next != '(') {
          stack_.push_back(Frame::command_sub);
          return 1;
        }
        return unquoted(text, i);
      case Frame::arithmetic:
        if (c == ')' && next == ')') {
          stack_.pop_back();
          return 2;
        }
        [[fallthrough]];
      case Frame::arith_paren:
        if (c == '(') {
          stack_.push_back(Frame::arith_paren);
          return 1;
        }
        if (c == ')') {
          if (top == Frame::arith_paren) stack_.pop_back();
          return 1;
        }
        if (c == '"') {
          stack_.push_back(Frame::double_quoted);
          return 1;
        }
        return open_substitution(text, i);
      case Frame::top:
        return unquoted(text, i);
    }
    return 1;
  }

 private:
  enum class Frame {
    top,
    single,
    ansi_c,
    double_quoted,
    command_sub,
    backtick,
    comment,
    arithmetic,
    arith_paren
  };

  std::size_t open_substitution(std::string_view text, std::size_t i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (text.compare(i, 3, "$((") == 0) {
      stack_.push_back(Frame::arithmetic);
      return 3;
    }
    if (c == '$' && next == '(') {
      stack_.push_back(Frame::command_sub);
      return 2;
    }
    if (c == '`') stack_.push_back(Frame::backtick);
    return 1;
  }

  std::size_t unquoted(std::string_view text, std::size_t i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '\\') return 2;
    if (c == '\'') {
      stack_.push_back(Frame::single);
      return 1;
    }
    if (c == '"') {
      stack_.push_back(Frame::double_quoted);
      return 1;
    }
    if (c == '$' && next == '\'') {
      stack_.push_back(Frame::ansi_c);
      return 2;
    }
    if (c == '#' && (i == 0 || std::string_view(" \t\n;&|()").find(text[i - 1]) != std::string_view::npos)) {
      stack_.push_back(Frame::comment);
      return 1;
    }
    if (c == '(' && next == '(') {  // the (( )) command (a subshell in a subshell is written "( (")
      stack_.push_back(Frame::arithmetic);
      return 2;
    }
    return open_substitution(text, i);
  }

  std::vector<Frame> stack_{Frame::top};
};

}  // namespace

Result<std::string> render_template(std::string_view text, const TemplateValues& values,
                                    const TextOrigin& origin, Substitution how,
                                    std::vector<std::string>* used) {
  std::string out;
  out.reserve(text.size());
  QuoteTracker quotes;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "\\{{") == 0) {
      out += "{{";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "{{") != 0) {
      const auto n = std::min(quotes.feed(text, i), text.size() - i);
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const auto close = text.find("}}", i + 2);
    const auto newline = text.find('\n', i + 2);
    if (close == std::string_view::npos || (newline != std::string_view::npos && newline < close)) {
      return fail("unterminated placeholder: '{{' without '}}' on the same line", where_in(text, i, origin),
                  "close it with '}}', or write '\\{{' for a literal '{{'");
    }
    const auto name = trim(text.substr(i + 2, close - i - 2));
    if (!is_placeholder_name(name)) {
      return fail(fmt::format("invalid placeholder name '{}'", name), where_in(text, i, origin),
                  "names are letters, digits, '_' and '.', starting with a letter or '_'");
    }
    const auto found = values.find(name);
    if (found == values.end()) {
      return fail(fmt::format("unknown placeholder '{{{{{}}}}}'", name), where_in(text, i, origin),
                  fmt::format("known placeholders: {}", fmt::join(values | std::views::keys, ", ")));
    }
    if (how == Substitution::variables) {
      if (auto q = shell_quote(found->second); !q) {
        return fail(fmt::format("the value of '{}' cannot be put in a job script: {}", name, q.error().what),
                    where_in(text, i, origin), q.error().hint);
      }
      if (quotes.in_arithmetic() && !is_whole_number(found->second)) {
        return fail(
            fmt::format("'{{{{{}}}}}' is inside an arithmetic expression ($(( )) or (( ))), where bash "
                        "evaluates its value as code, and its value '{}' is not a whole number",
                        name, printable(found->second, 200)),
            where_in(text, i, origin),
            "only whole numbers (digits, an optional '-', no leading zero) may be placed there; "
            "compute with the value outside the arithmetic, or set a number");
      }
      const auto var = variable_for(name);
      out +=
          quotes.context() == QuoteTracker::Context::double_quoted ? "${" + var + "}" : "\"${" + var + "}\"";
    } else {
      out += found->second;
    }
    if (used != nullptr) used->emplace_back(name);
    i = close + 2;
  }
  return out;
}

TextOrigin string_value_origin(std::string_view toml_text, std::string file, std::uint32_t line,
                               std::uint32_t column) {
  TextOrigin origin{std::move(file), line, column};
  if (line == 0 || column == 0) return origin;
  // Find the line.
  std::size_t start = 0;
  for (std::uint32_t l = 1; l < line; ++l) {
    const auto nl = toml_text.find('\n', start);
    if (nl == std::string_view::npos) return origin;
    start = nl + 1;
  }
  const auto end = toml_text.find('\n', start);
  const auto text =
      toml_text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  if (column - 1 > text.size()) return origin;
  const auto value = text.substr(column - 1);
  if (value.starts_with("\"\"\"") || value.starts_with("'''")) {
    // TOML trims a newline right after the opening delimiter.
    if (value.find_first_not_of(" \t\r", 3) == std::string_view::npos) {
      return TextOrigin{origin.file, line + 1, 1};
    }
    origin.column = column + 3;
  } else if (value.starts_with('"') || value.starts_with('\'')) {
    origin.column = column + 1;
  }
  return origin;
}

}  // namespace trnslurm
