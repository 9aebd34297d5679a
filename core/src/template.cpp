#include "trnslurm/template.hpp"

#include <fmt/format.h>

#include <cctype>

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

Result<std::string> render_template(std::string_view text, const TemplateValues& values,
                                    const TextOrigin& origin, Substitution how) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "\\{{") == 0) {
      out += "{{";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "{{") != 0) {
      out += text[i++];
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
      std::string known;
      for (const auto& [key, value] : values) known += (known.empty() ? "" : ", ") + key;
      return fail(fmt::format("unknown placeholder '{{{{{}}}}}'", name), where_in(text, i, origin),
                  fmt::format("known placeholders: {}", known));
    }
    if (how == Substitution::shell_quoted) {
      const bool in_quotes = i > 0 && (text[i - 1] == '"' || text[i - 1] == '\'') &&
                             close + 2 < text.size() && text[close + 2] == text[i - 1];
      if (in_quotes) {
        return fail(fmt::format("placeholder '{{{{{}}}}}' is inside quotes", name), where_in(text, i, origin),
                    "write it without quotes: every value is inserted as one shell-quoted word");
      }
      auto quoted = shell_quote(found->second);
      if (!quoted) {
        return fail(
            fmt::format("the value of '{}' cannot be put in a job script: {}", name, quoted.error().what),
            where_in(text, i, origin), quoted.error().hint);
      }
      out += *quoted;
    } else {
      out += found->second;
    }
    i = close + 2;
  }
  return out;
}

}  // namespace trnslurm
