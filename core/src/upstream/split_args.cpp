#include <fmt/format.h>

#include "trnslurm/upstream/args.hpp"

namespace trnslurm::upstream {

namespace {

constexpr std::string_view operators = ";|&<>()";

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Walks the text keeping the line and column (in characters, not bytes) of the next character.
class Cursor {
 public:
  Cursor(std::string_view text, const SourcePos& start) : text_(text), pos_(start) {
    if (pos_.line == 0) pos_.line = 1;
    if (pos_.column == 0) pos_.column = 1;
  }
  bool done() const { return i_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return i_ + ahead < text_.size() ? text_[i_ + ahead] : '\0'; }
  bool at(std::string_view s) const { return text_.substr(i_).starts_with(s); }
  const SourcePos& pos() const { return pos_; }
  char next() {
    const char c = text_[i_++];
    if (c == '\n') {
      ++pos_.line;
      pos_.column = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++pos_.column;  // a UTF-8 continuation byte belongs to the character already counted
    }
    return c;
  }

 private:
  std::string_view text_;
  std::size_t i_ = 0;
  SourcePos pos_;
};

std::unexpected<Error> refuse(const SourcePos& pos, std::string what, std::string hint) {
  return fail(std::move(what), to_string(pos), std::move(hint));
}

std::unexpected<Error> refuse_expansion(const SourcePos& pos, char c) {
  return refuse(pos, fmt::format("'{}' in an argument list: the shell would expand it", c),
                "write the value itself or a {{placeholder}}: arguments are checked against upstream before "
                "anything runs, and an expansion cannot be; inside '...' it is a literal character");
}

class Splitter {
 public:
  Splitter(std::string_view text, const SourcePos& start) : in_(text, start) {}

  Result<std::vector<ArgWord>> run() {
    while (skip_to_word()) {
      ArgWord word{{}, in_.pos()};
      if (auto r = read_word(word.text); !r) return std::unexpected(r.error());
      words_.push_back(std::move(word));
    }
    return std::move(words_);
  }

 private:
  // Skips blanks, newlines, continuations and comments; false at the end of the text.
  bool skip_to_word() {
    while (!in_.done()) {
      if (is_blank(in_.peek()) || in_.peek() == '\n') {
        in_.next();
      } else if (in_.at("\\\n")) {
        in_.next(), in_.next();
      } else if (in_.peek() == '#') {
        while (!in_.done() && in_.peek() != '\n') in_.next();
      } else {
        return true;
      }
    }
    return false;
  }

  Result<void> read_word(std::string& out) {
    while (!in_.done() && !is_blank(in_.peek()) && in_.peek() != '\n') {
      const SourcePos here = in_.pos();
      const char c = in_.peek();
      Result<void> step;
      if (c == '\'') {
        step = single_quoted(out);
      } else if (c == '"') {
        step = double_quoted(out);
      } else if (c == '\\') {
        step = escaped(out);
      } else if (in_.at("{{")) {
        step = placeholder(out);
      } else if (c == '$' || c == '`') {
        return refuse_expansion(here, c);
      } else if (operators.find(c) != std::string_view::npos) {
        return refuse(here, fmt::format("'{}' outside quotes in an argument list", c),
                      "quote it if it belongs to a value; commands, pipes and redirections have no place in "
                      "the arguments of an upstream script");
      } else {
        out += in_.next();
      }
      if (!step) return step;
    }
    return {};
  }

  Result<void> escaped(std::string& out) {
    in_.next();
    if (in_.done()) return {};
    if (in_.peek() == '\n') {
      in_.next();  // a continuation inside a word joins the lines
      return {};
    }
    if (in_.peek() == '{') out += '\\';  // \{{ stays the template's escape, not a placeholder
    out += in_.next();
    return {};
  }

  Result<void> single_quoted(std::string& out) {
    const SourcePos open = in_.pos();
    in_.next();
    while (!in_.done() && in_.peek() != '\'') out += in_.next();
    if (in_.done()) return refuse(open, "unterminated ' in an argument list", "close the quote");
    in_.next();
    return {};
  }

  Result<void> double_quoted(std::string& out) {
    const SourcePos open = in_.pos();
    in_.next();
    while (!in_.done() && in_.peek() != '"') {
      const char c = in_.peek();
      if (c == '$' || c == '`') return refuse_expansion(in_.pos(), c);
      if (in_.at("{{")) {
        if (auto r = placeholder(out); !r) return r;
      } else if (in_.at("\\\n")) {
        in_.next(), in_.next();
      } else if (c == '\\' && (in_.peek(1) == '"' || in_.peek(1) == '\\')) {
        in_.next();
        out += in_.next();
      } else if (in_.at("\\{")) {
        out += in_.next();  // \{{ stays the template's escape
        out += in_.next();
      } else {
        out += in_.next();
      }
    }
    if (in_.done()) return refuse(open, "unterminated \" in an argument list", "close the quote");
    in_.next();
    return {};
  }

  // {{ name }} is kept whole, blanks included: it is one value when rendered.
  Result<void> placeholder(std::string& out) {
    const SourcePos open = in_.pos();
    std::string text;
    while (!in_.done() && !in_.at("}}") && in_.peek() != '\n') text += in_.next();
    if (!in_.at("}}"))
      return refuse(open, "unterminated {{ in an argument list", "close the placeholder with }}");
    in_.next(), in_.next();
    out += text + "}}";
    return {};
  }

  Cursor in_;
  std::vector<ArgWord> words_;
};

}  // namespace

Result<std::vector<ArgWord>> split_args(std::string_view text, const SourcePos& start) {
  return Splitter(text, start).run();
}

bool has_placeholder(std::string_view word) {
  for (std::size_t i = word.find("{{"); i != std::string_view::npos; i = word.find("{{", i + 1))
    if (i == 0 || word[i - 1] != '\\') return true;
  return false;
}

}  // namespace trnslurm::upstream
