#include "toml_read.hpp"

#include "trnslurm/util/source_pos.hpp"

#include <fmt/format.h>

#include <vector>

namespace trnslurm {

namespace {

// A lexer that knows just enough TOML to count nesting: strings, comments, keys, brackets. It
// agrees with a TOML parser on every valid text; where the text is invalid the parser stops at
// the first error, so what follows it is never read deeper than counted here.
class NestingScan {
 public:
  NestingScan(std::string_view text, const std::string& file) : t_(text), file_(file) {}

  Result<void> run() {
    while (i_ < t_.size()) {
      skip_blank();
      if (at('#')) {
        skip_comment();
      } else if (at('[')) {
        advance();
        if (at('[')) advance();
        if (auto r = key(0); !r) return std::unexpected(r.error());
        skip_to_line_end();
      } else if (at('\n')) {
        advance();
      } else {
        const std::size_t before = i_;
        auto parts = key(0);
        if (!parts) return std::unexpected(parts.error());
        skip_blank();
        if (at('=')) {
          advance();
          if (auto r = value(*parts); !r) return r;
        }
        if (i_ == before) advance();  // not a key: the parser reports it
        skip_to_line_end();
      }
    }
    return {};
  }

 private:
  bool at(char c) const { return i_ < t_.size() && t_[i_] == c; }
  bool at(std::string_view s) const { return t_.substr(i_, s.size()) == s; }
  void advance() {
    if (i_ >= t_.size()) return;
    const auto c = static_cast<unsigned char>(t_[i_++]);
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++column_;  // columns count characters, not UTF-8 continuation bytes
    }
  }
  void skip_blank() {
    while (at(' ') || at('\t') || at('\r')) advance();
  }
  void skip_comment() {
    while (i_ < t_.size() && !at('\n')) advance();
  }
  // Past anything left on a line (a comment, or what the parser will refuse): strings included,
  // so a newline inside a multi-line string does not end the line here.
  void skip_to_line_end() {
    while (i_ < t_.size() && !at('\n')) {
      if (at('"') || at('\'')) {
        string();
      } else if (at('#')) {
        skip_comment();
      } else {
        advance();
      }
    }
  }
  void string() {
    const char q = t_[i_];
    const bool multi = at(q == '"' ? std::string_view("\"\"\"") : std::string_view("'''"));
    const std::size_t quotes = multi ? 3 : 1;
    for (std::size_t k = 0; k < quotes; ++k) advance();
    while (i_ < t_.size()) {
      if (q == '"' && at('\\')) {
        advance();
        advance();
        continue;
      }
      if (!multi && at('\n')) return;
      if (at(q) && (!multi || at(q == '"' ? std::string_view("\"\"\"") : std::string_view("'''")))) {
        for (std::size_t k = 0; k < quotes; ++k) advance();
        while (multi && at(q)) advance();  // up to two more quotes belong to the content
        return;
      }
      advance();
    }
  }
  // At the component or bracket that goes one level too deep.
  std::unexpected<Error> too_deep(std::uint32_t line, std::uint32_t column) const {
    return fail(fmt::format("the TOML nests more than {} levels (dotted key components, arrays and inline "
                            "tables together)",
                            max_toml_depth),
                fmt::format("{}:{}:{}", file_, line, column),
                "a recipe or instances file nests a few levels: this file is damaged or not one");
  }
  // A key's components (bare or quoted, separated by dots), counted from `depth`; the depth its
  // value starts at.
  Result<std::size_t> key(std::size_t depth) {
    for (;;) {
      skip_blank();
      const auto line = line_;
      const auto column = column_;
      if (at('"') || at('\'')) {
        string();
      } else if (bare_key_char()) {
        while (bare_key_char()) advance();
      } else {
        return depth;
      }
      if (++depth > max_toml_depth) return too_deep(line, column);
      skip_blank();
      if (!at('.')) return depth;
      advance();
    }
  }
  bool bare_key_char() const {
    if (i_ >= t_.size()) return false;
    const char c = t_[i_];
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  // A value and what it nests: arrays (over lines) and inline tables, whose keys count too.
  Result<void> value(std::size_t depth) {
    struct Open {
      char close;
      std::size_t values;  // the depth the values inside start at (below an inline table's key)
    };
    std::vector<Open> open;
    const auto push = [&](char close) -> Result<void> {
      const std::size_t d = (open.empty() ? depth : open.back().values) + 1;
      if (d > max_toml_depth) return too_deep(line_, column_);
      open.push_back({close, d});
      advance();
      return {};
    };
    // An inline table's key: its value nests below the key's components. `table` is the
    // depth of the table itself.
    std::vector<std::size_t> tables;
    const auto inline_key = [&]() -> Result<void> {
      auto parts = key(tables.back());
      if (!parts) return std::unexpected(parts.error());
      skip_blank();
      if (at('=')) advance();
      open.back().values = *parts;
      return {};
    };
    skip_blank();
    do {
      if (at('"') || at('\'')) {
        string();
      } else if (at('#')) {
        skip_comment();
      } else if (at('[')) {
        if (auto r = push(']'); !r) return r;
      } else if (at('{')) {
        if (auto r = push('}'); !r) return r;
        tables.push_back(open.back().values);
        if (auto r = inline_key(); !r) return r;
      } else if (!open.empty() && at(open.back().close)) {
        if (open.back().close == '}') tables.pop_back();
        open.pop_back();
        advance();
      } else if (at(']') || at('}') || (at('\n') && open.empty())) {
        return {};  // unbalanced (the parser stops here), or the end of a top-level value
      } else if (at(',') && !open.empty() && open.back().close == '}') {
        advance();
        if (auto r = inline_key(); !r) return r;
      } else {
        advance();
      }
    } while (i_ < t_.size() && !(open.empty() && (at('\n') || at('#'))));
    return {};
  }

  std::string_view t_;
  const std::string& file_;
  std::size_t i_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t column_ = 1;
};

}  // namespace

Result<void> check_toml_nesting(std::string_view text, const std::string& file) {
  return NestingScan(text, file).run();
}

Result<toml::table> parse_toml(std::string_view text, const std::string& file) {
  if (auto r = check_toml_nesting(text, file); !r) return std::unexpected(r.error());
  try {
    return toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return fail(std::string(e.description()), to_string(SourcePos{file, begin.line, begin.column}),
                "fix the TOML syntax (https://toml.io)");
  }
}

std::string toml_type_name(const toml::node& node) {
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

}  // namespace trnslurm
