#include "trnslurm/util/template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <ranges>
#include <set>
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

std::optional<std::string> reserved_variable(std::string_view name) {
  // TRNSLURM_STANDIN_* are the CPU stand-ins' knobs (scripts/cpu/README.md), set by recipes.
  if (name.starts_with("TRNSLURM_") && !name.starts_with("TRNSLURM_STANDIN_"))
    return std::string(
        "TRNSLURM_* variables are trnslurm's own: the job script sets them, and a stage "
        "that changed them would move its status files or replace its programs");
  for (const std::string_view ro : {"BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"})
    if (name == ro) return fmt::format("{} is read-only in bash: setting it fails the job script", name);
  return std::nullopt;
}

namespace {

bool word_boundary(char c) {
  return std::string_view(" \t\n;&|()").find(c) != std::string_view::npos;
}

// Inside [[ ]]: the word before the placeholder (quotes and blanks skipped) and the word after.
bool beside_arithmetic_test(std::string_view text, std::size_t open, std::size_t close) {
  const auto is_op = [](std::string_view w, bool before) {
    for (const std::string_view op : {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
      if (w == op) return true;
    return before && w == "-v";
  };
  std::size_t b = open;
  while (b > 0 && std::string_view(" \t\"'").find(text[b - 1]) != std::string_view::npos) --b;
  std::size_t a = b;
  while (a > 0 && std::string_view(" \t\"'").find(text[a - 1]) == std::string_view::npos) --a;
  if (is_op(text.substr(a, b - a), true)) return true;
  std::size_t f = close;
  while (f < text.size() && std::string_view(" \t\"'").find(text[f]) != std::string_view::npos) ++f;
  std::size_t g = f;
  while (g < text.size() && std::string_view(" \t\"'").find(text[g]) == std::string_view::npos) ++g;
  return is_op(text.substr(f, g - f), false);
}

// Bash's quoting context at a point of a script, approximately, and the places where no quoting
// helps because bash reads a value as code there (issue 31):
// - arithmetic: $(( )), (( )), $[ ], an array subscript (a[...], ${a[...]}), a substring's
//   offset and length (${v:offset:length}), the arguments of `let`: bash evaluates the value as
//   an expression, and evaluating expands array subscripts again (`a[$(cmd)]` runs cmd);
// - [[ ]] beside an arithmetic comparison (-eq, -lt, ...) or after -v: the same evaluation;
// - a second shell's code: the command string of `bash -c` (sh, dash, zsh, ksh, su, flock...),
//   the arguments of eval, ssh, watch, pdsh and clush, unless single quotes keep the outer shell
//   from expanding the reference there. A single-quoted one reaches the second shell as written,
//   the reference in it: that text is read as a script of its own by a tracker one level down
//   (read_script(), at most max_depth levels), so the inner shell's arithmetic, command strings
//   and input are judged as the outer ones are;
// - an interpreter's program: python -c, perl -e, node -e, ruby -e, and what a pipeline prints
//   into one that reads its program from stdin (`| python`), as for a shell;
// - a variable that holds a placeholder's value (`cmd="ls {{x}}"`) where it is later read as
//   code (`eval "$cmd"`, `bash -c "$cmd"`, `$(( $cmd ))`, `| bash`) or run unquoted as a command
//   (`$cmd`); an assignment to a variable declared -i earlier (`declare -i n; n={{x}}`);
// - a process substitution a shell runs as its script (`bash <(...)`, `source <(...)`), and a
//   command string xargs puts its input into (`xargs -I{} sh -c '... {}'`);
// - a shell's input: what a pipeline's earlier commands print into a shell that reads its
//   script from stdin (`echo {{x}} | bash`), a here-string to one (`bash <<< {{x}}`) and the
//   body of a here-document one reads (`bash <<EOF`, or `cat <<EOF | sh`). These are known only
//   once the pipeline is read: the tracker keeps the placeholders of a pipeline and reports
//   the first one a later shell reads (violation()).
// A here-document's body is expanded as in double quotes (no quotes needed, none added); one
// with a quoted delimiter (<<'EOF') expands nothing, so a placeholder there is refused.
// Not recognised (docs/security.md says so): a script written to a file and run later, ssh
// reading commands from stdin, a variable's value reaching code through a function or across
// scopes, and pipelines through a `{ }` group into a shell across lines.
class QuoteTracker {
 public:
  enum class Context { unquoted, single, double_quoted };

  // A placeholder refused wherever it is, found once the pipeline or here-document around it
  // was read: its offset in the template, its name, and why.
  struct Violation {
    std::size_t offset;
    std::string name;
    std::string why;
    bool unplaced = false;  // not code: the value would not be placed at all (a quoted here-document)
  };

  // A placeholder in a second script (a command string, eval's arguments): its offset in the
  // template, whether its value is a whole number, and whether the script holds the reference
  // itself (single-quoted where it stands) rather than the value the outer shell expanded.
  struct Reference {
    std::size_t offset;
    std::string name;
    bool whole;
    bool literal;
  };

  // How many shells deep command strings are read; a placeholder deeper takes whole numbers only.
  static constexpr int max_depth = 4;

  QuoteTracker() = default;

  // Why the placeholder at text[open, close) is refused here, given whether its value is a whole
  // number; nullopt where it may stand.
  std::optional<Violation> judge(std::string_view text, std::size_t open, std::size_t close,
                                 std::size_t offset, std::string_view name, bool whole) const {
    if (const auto none = unexpanded()) return Violation{offset, std::string(name), *none, true};
    auto code = code_context();
    if (!code && in_test() && beside_arithmetic_test(text, open, close))
      code = "an arithmetic comparison of [[ ]] (-eq, -lt, ... or -v), which bash evaluates as code";
    if (code && !whole) return Violation{offset, std::string(name), *code};
    return std::nullopt;
  }

  // The placeholders (by offset) whose reference is placed without quotes because a second
  // script holds it inside its own double quotes or here-document, where quotes are characters.
  const std::vector<std::size_t>& bare() const { return bare_; }

  // Why no value can be placed here at all, or nullopt.
  std::optional<std::string> unexpanded() const {
    if (stack_.back() == Frame::heredoc_literal)
      return "a here-document whose delimiter is quoted (<<'EOF'), where bash expands nothing";
    return std::nullopt;
  }

  // Where the value of a placeholder here would be read as code, or nullopt.
  std::optional<std::string> code_context() const {
    if (let_arguments()) return "an argument of let or declare -i, which bash evaluates as arithmetic";
    for (std::size_t k = 0; k < stack_.size(); ++k)
      if (stack_[k] == Frame::heredoc_expanding && bodies_open_[heredoc_index(k)].feeds_shell)
        return "a here-document that a shell reads as its script";
    if (auto arithmetic = arithmetic_frame()) return arithmetic;
    if (const auto* c = second_shell()) return c;
    return std::nullopt;
  }

  // Why the innermost frames (quotes aside) evaluate what they hold as arithmetic, or nullopt.
  std::optional<std::string> arithmetic_frame() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      switch (*it) {
        case Frame::arithmetic:
        case Frame::arith_bracket:
          return "an arithmetic expression ($(( )), (( )) or $[ ]), which bash evaluates as code";
        case Frame::subscript:
          return "an array subscript, which bash evaluates as arithmetic";
        case Frame::param_offset:
          return "the offset or length of ${name:offset:length}, which bash evaluates as arithmetic";
        case Frame::double_quoted:
        case Frame::arith_paren:
        case Frame::param_word:  // $(( ${x:-V} )): the expansion is evaluated after it
          continue;
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // Inside [[ ]] (quotes aside): the caller looks at the operators beside the placeholder.
  bool in_test() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (*it == Frame::test) return true;
      if (*it != Frame::double_quoted && *it != Frame::single) return false;
    }
    return false;
  }

  Context context() const {
    switch (stack_.back()) {
      case Frame::single:
      case Frame::ansi_c:
        return Context::single;
      case Frame::double_quoted:
      case Frame::heredoc_expanding:  // expanded like double quotes; a quote there is a character
        return Context::double_quoted;
      default:
        return Context::unquoted;
    }
  }

  // A placeholder was placed at `offset`: it is part of the current word, and unless its value
  // is a whole number, what a later shell of its pipeline reads is checked for it.
  void placeholder(std::size_t offset, std::string_view name, bool whole_number) {
    auto& cmd = commands_.back();
    cmd.word += '\x01';
    if (collecting(cmd)) {
      cmd.script += '\x01';
      cmd.refs.push_back({offset, std::string(name), whole_number, context() == Context::single});
    }
    if (!whole_number) carry(offset, name, false);
  }

  // Reads a second script: the text of a command string or of eval's arguments as that shell
  // receives it, '\x01' for each of `refs` in order. What it refuses is refused here; what it
  // places without quotes is placed so here.
  void read_script(std::string_view script, const std::vector<Reference>& refs) {
    if (refs.empty() || violation_) return;
    if (depth_ >= max_depth) {
      for (const auto& r : refs)
        if (!r.whole) {
          violation_ = Violation{r.offset, r.name,
                                 fmt::format("a command string nested more than {} shells deep", max_depth)};
          return;
        }
      return;
    }
    QuoteTracker inner;
    inner.depth_ = depth_ + 1;
    std::size_t k = 0;
    for (std::size_t i = 0; i < script.size() && !inner.violation_;) {
      if (script[i] != '\x01' || k == refs.size()) {
        i += std::min(inner.feed(script, i), script.size() - i);
        continue;
      }
      // A value the outer shell expanded is a whole number here (the outer tracker refused any
      // other): only the references the script holds are judged.
      const auto& r = refs[k++];
      if (r.literal) {
        if (auto v = inner.judge(script, i, i + 1, r.offset, r.name, r.whole)) {
          violation_ = std::move(v);
          return;
        }
        if (inner.context() == Context::double_quoted) bare_.push_back(r.offset);
      }
      inner.placeholder(r.offset, r.name, r.whole);
      ++i;
    }
    inner.finish();
    if (inner.violation_) violation_ = std::move(inner.violation_);
    bare_.insert(bare_.end(), inner.bare_.begin(), inner.bare_.end());
  }

  // The first placeholder found to be read by a shell, once found.
  const std::optional<Violation>& violation() const { return violation_; }

  // The end of the text ends every pipeline still open (and what an unterminated quote or
  // substitution left open).
  void finish() {
    while (stack_.size() > 1) pop();
    end_word();
    end_stage(false);
  }

  // Feeds text[i]; returns how many characters were consumed (2 for an escape).
  std::size_t feed(std::string_view text, std::size_t i) {
    track_words(text, i);
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    const Frame top = stack_.back();
    if (c == '\n' && is_command_frame(top) && !bodies_queued_.empty()) {
      // The line that opened here-documents ends: the first body starts.
      bodies_open_.push_back(bodies_queued_.front());
      bodies_queued_.erase(bodies_queued_.begin());
      push(bodies_open_.back().quoted ? Frame::heredoc_literal : Frame::heredoc_expanding);
      return 1;
    }
    if ((top == Frame::heredoc_literal || top == Frame::heredoc_expanding) &&
        (i == 0 || text[i - 1] == '\n')) {
      const auto eol = std::min(text.find('\n', i), text.size());
      auto line = text.substr(i, eol - i);
      if (bodies_open_.back().strip_tabs)
        while (line.starts_with('\t')) line.remove_prefix(1);
      if (line == bodies_open_.back().delimiter) {
        bodies_open_.pop_back();
        pop();
        return eol - i;
      }
    }
    switch (top) {
      case Frame::heredoc_literal:
        return 1;
      case Frame::heredoc_expanding:
        if (c == '\\') return 2;
        return open_substitution(text, i);
      case Frame::comment:
        if (c != '\n') return 1;
        pop();
        return feed(text, i);  // the newline ends the command line, as without the comment
      case Frame::single:
        if (c == '\'') pop();
        return 1;
      case Frame::ansi_c:
        if (c == '\\') return 2;
        if (c == '\'') pop();
        return 1;
      case Frame::double_quoted:
        if (c == '\\') return 2;
        if (c == '"') {
          pop();
          return 1;
        }
        return open_substitution(text, i);
      case Frame::backtick:
        if (c == '`') {
          pop();
          return 1;
        }
        return unquoted(text, i);
      case Frame::command_sub:
      case Frame::process_sub:
        if (c == ')') {
          pop();
          return 1;
        }
        if (c == '(' && next != '(') {
          push(Frame::command_sub);
          return 1;
        }
        return unquoted(text, i);
      case Frame::test:
        if (c == ']' && next == ']' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
          pop();
          return 2;
        }
        return unquoted(text, i);
      case Frame::param_word:
        if (c == '}') {
          pop();
          return 1;
        }
        if (c == '\\') return 2;
        if (c == '\'') {
          push(Frame::single);
          return 1;
        }
        if (c == '"') {
          push(Frame::double_quoted);
          return 1;
        }
        return open_substitution(text, i);
      case Frame::arithmetic:
        if (c == ')' && next == ')') {
          pop();
          return 2;
        }
        [[fallthrough]];
      case Frame::arith_paren:
      case Frame::arith_bracket:
      case Frame::subscript:
      case Frame::param_offset:
        if (c == '(') {
          push(Frame::arith_paren);
          return 1;
        }
        if (c == ')') {
          if (top == Frame::arith_paren) pop();
          return 1;
        }
        if (c == '[') {
          push(Frame::subscript);
          return 1;
        }
        if (c == ']') {
          if (top == Frame::subscript || top == Frame::arith_bracket) pop();
          return 1;
        }
        if (c == '}' && top == Frame::param_offset) {
          pop();
          return 1;
        }
        if (c == '"') {
          push(Frame::double_quoted);
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
    process_sub,  // <( ) and >( )
    backtick,
    comment,
    arithmetic,         // $(( )) and (( ))
    arith_paren,        // ( ) inside arithmetic
    arith_bracket,      // $[ ]
    subscript,          // name[ ]
    param_word,         // ${name...}: the rest of a parameter expansion up to }
    param_offset,       // ${name:offset:length}
    test,               // [[ ]]
    heredoc_expanding,  // a here-document's body, <<EOF
    heredoc_literal,    // <<'EOF': nothing expanded
  };

  // A here-document: read from its operator, its body starts on the next line.
  struct Heredoc {
    std::string delimiter;
    bool quoted = false;       // <<'EOF', <<"EOF", <<\EOF
    bool strip_tabs = false;   // <<-
    std::size_t stage = 0;     // the command of its pipeline it feeds
    bool feeds_shell = false;  // that command, or a later one of its pipeline, runs its input
  };

  struct Pending {
    std::size_t offset;
    std::string name;
    std::size_t stage;     // the pipeline's command it is in
    bool input;            // in that command's input (a here-string), not its arguments
    bool printed = false;  // printed by a command substitution, not the value itself
  };

  // A pipeline being read at one level of command: its placeholders, which of its commands
  // read their input as a script, its here-documents.
  struct Pipeline {
    std::size_t stage = 0;
    int groups = 0;  // ( ) and { } open: their commands are one stage of the pipeline
    std::vector<Pending> pending;
    std::vector<Pending> inside;  // every placeholder of this level: a command substitution's output
    std::vector<bool> shells;     // by stage: reads its input as a script
    std::vector<Heredoc> heredocs;
    bool after_pipe = false;      // only blanks since the last |: a newline there continues it
    bool runs_as_script = false;  // a process substitution a shell runs (bash <(...))
  };

  // The words of the simple command being read, at one level of command (the script, a command
  // substitution): enough to know a second shell's command string and eval's arguments.
  struct Command {
    std::string word;                  // the current word's text, quotes removed
    std::size_t words = 0;             // words ended so far
    bool shell = false;                // a word so far names a shell (or su, flock...)
    bool command_string = false;       // the current word is the command string of -c
    bool all_arguments = false;        // eval, ssh...: every word after is read by a shell
    bool let = false;                  // let, declare -i: every word after is arithmetic
    bool declare = false;              // declare, typeset, local, export, readonly: -i makes it let
    bool wrapper = false;              // sudo, env, srun, timeout...: runs the command after it
    bool script_shell = false;         // the command run is a shell (sh, bash...)
    bool saw_c = false;                // ... given its script by -c
    bool operand = false;              // ... or by a file named after it
    bool here_string = false;          // the next word is the command's input (<<<)
    bool interpreter = false;          // ... an interpreter (python, perl...) rather than a shell
    bool program_text = false;         // the command string is an interpreter's program, not a shell's
    std::string_view program_options;  // ... the options that give it (python -c, perl -e)
    std::string_view module_options;   // ... and those that name a module to run (python -m)
    bool source = false;               // source or .: its first operand is a script
    std::size_t assignments = 0;       // words so far that are assignments before the command name
    bool xargs = false;                // xargs: runs the command after it with its input as arguments
    bool replace_next = false;         // ... -I: the next word is the replace string
    std::string replace;               // ... the replace string (-I{}, -i)
    bool xargs_code = false;           // ... which the command string holds: the input becomes code
    std::string script;                // a second script: the command string, or eval's arguments
    std::vector<Reference> refs;       // the placeholders in it
    std::vector<Pending> values;       // the placeholders' values in the current word (a variable's too)
    bool reads_script() const { return xargs ? xargs_code : script_shell && !saw_c && !operand; }
    // The next operand is the script that a shell runs, or that source reads.
    bool script_operand_next() const {
      return (!xargs && reads_script()) || (source && words == assignments + 1);
    }
  };

  static bool is_command_frame(Frame f) {
    return f == Frame::top || f == Frame::command_sub || f == Frame::process_sub || f == Frame::backtick;
  }

  // Where a word's characters are also those of a second script.
  static bool collecting(const Command& cmd) { return cmd.command_string || cmd.all_arguments; }

  // A placeholder's value (or a variable holding it) in the current word: printed into the
  // pipeline, kept for a command substitution's output, and carried by an assignment.
  void carry(std::size_t offset, std::string_view name, bool printed) {
    auto& p = pipelines_.back();
    p.pending.push_back({offset, std::string(name), p.stage, commands_.back().here_string, printed});
    p.inside.push_back({offset, std::string(name), 0, false, printed});
    commands_.back().values.push_back({offset, std::string(name), 0, false, printed});
  }

  void push(Frame f) {
    stack_.push_back(f);
    if (is_command_frame(f)) {
      commands_.emplace_back();
      pipelines_.emplace_back();
    }
  }
  void pop() {
    if (stack_.size() <= 1) return;
    if (is_command_frame(stack_.back())) {
      end_word();
      end_stage(false);
      // What a command substitution prints is part of the command around it; what a process
      // substitution prints may be the script a shell runs.
      const auto inside = std::move(pipelines_.back().inside);
      const bool script = pipelines_.back().runs_as_script;
      commands_.pop_back();
      pipelines_.pop_back();
      for (const auto& p : inside) carry(p.offset, p.name, true);
      if (script) {
        commands_.back().operand = true;  // the operands after it are the script's data
        if (!inside.empty() && !violation_)
          violation_ = Violation{inside.front().offset, inside.front().name,
                                 "what a process substitution prints, which a shell runs as its script "
                                 "(bash <(...), source <(...))"};
      }
    }
    stack_.pop_back();
  }

  // The index in bodies_open_ of the here-document at stack_[k].
  std::size_t heredoc_index(std::size_t k) const {
    std::size_t n = 0;
    for (std::size_t j = 0; j < k; ++j)
      if (stack_[j] == Frame::heredoc_expanding || stack_[j] == Frame::heredoc_literal) ++n;
    return n;
  }

  // A command of the pipeline ends: by `|` (the pipeline goes on) or by anything else. A
  // command that runs its input as a script makes every earlier placeholder of the pipeline
  // (and one in its own input) a violation.
  void end_stage(bool pipe) {
    auto& p = pipelines_.back();
    const bool runs_input = commands_.back().reads_script();
    if (p.shells.size() <= p.stage) p.shells.resize(p.stage + 1, false);
    if (runs_input) {
      p.shells[p.stage] = true;
      for (const auto& pending : p.pending)
        if (!violation_ && (pending.stage < p.stage || (pending.stage == p.stage && pending.input)))
          violation_ =
              Violation{pending.offset, pending.name,
                        "what a shell reads as its script (a pipe or a here-string into sh, bash...)"};
    }
    auto& cmd = commands_.back();
    if (cmd.all_arguments) read_script(cmd.script, cmd.refs);  // eval's arguments, once all are read
    cmd = Command{};
    if (pipe) {
      ++p.stage;
      p.after_pipe = true;
      return;
    }
    for (auto& h : p.heredocs) {  // their bodies start after this line, in a group too
      for (std::size_t k = h.stage; k < p.shells.size(); ++k) h.feeds_shell = h.feeds_shell || p.shells[k];
      bodies_queued_.push_back(std::move(h));
    }
    p.heredocs.clear();
    if (p.groups > 0) return;
    p.pending.clear();
    p.shells.clear();
    p.stage = 0;
  }

  // The index in stack_ of the innermost command frame.
  std::size_t command_frame() const {
    std::size_t k = stack_.size() - 1;
    while (k > 0 && !is_command_frame(stack_[k])) --k;
    return k;
  }

  void word_char(char c) {
    const auto k = command_frame();
    bool direct = true;  // only quotes between the command and this character
    for (std::size_t j = k + 1; j < stack_.size(); ++j)
      if (stack_[j] != Frame::single && stack_[j] != Frame::double_quoted && stack_[j] != Frame::ansi_c)
        direct = false;
    auto& cmd = commands_.back();
    cmd.word += direct ? c : '\x01';
    // What the outer shell expands is unknown text to the second script: a plain word there.
    if (collecting(cmd)) cmd.script += direct && c != '\x01' ? c : '_';
  }

  void end_word() {
    auto& cmd = commands_.back();
    if (cmd.word.empty()) return;
    const std::string word = std::move(cmd.word);
    cmd.word.clear();
    const auto values = std::move(cmd.values);
    cmd.values.clear();
    const auto slash = word.rfind('/');
    const auto base =
        slash == std::string::npos ? std::string_view(word) : std::string_view(word).substr(slash + 1);
    const bool option = word.size() > 1 && word.front() == '-' && word[1] != '-' &&
                        std::ranges::all_of(word.substr(1), [](char ch) {
                          return std::isalpha(static_cast<unsigned char>(ch)) != 0;
                        });
    const auto is_any = [&](std::initializer_list<std::string_view> names) {
      return std::ranges::find(names, base) != names.end();
    };
    const auto has_any = [&](std::string_view letters) {
      return option && word.find_first_of(letters, 1) != std::string::npos;
    };
    const bool names_shell = is_any({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"});
    const bool command_position = cmd.words == cmd.assignments;  // no command name yet
    const auto assigned = assignment_name(word);
    const bool assignment = assigned && (command_position || cmd.declare);
    const bool name = command_position && !assignment;  // this word is the command's name
    if (assignment) {
      if (command_position) ++cmd.assignments;
      assign(*assigned, values, cmd.declare && cmd.let);
    } else if (cmd.declare && cmd.let && is_shell_name(word)) {
      int_vars_.emplace(word);
    }
    if (cmd.all_arguments) cmd.script += ' ';  // eval joins its arguments with blanks
    if (cmd.command_string) {
      // The command string ended (what follows are its $0, $1...): the second script is read.
      if (!cmd.program_text) read_script(cmd.script, cmd.refs);
      if (cmd.xargs && !cmd.replace.empty() && cmd.script.find(cmd.replace) != std::string::npos)
        cmd.xargs_code = true;
      cmd.command_string = cmd.program_text = false;
      cmd.script.clear();
      cmd.refs.clear();
    } else if (!cmd.all_arguments && cmd.shell && has_any("c")) {
      cmd.command_string = cmd.saw_c = true;
    } else if (!cmd.all_arguments && cmd.interpreter && has_any(cmd.program_options)) {
      cmd.command_string = cmd.program_text = cmd.saw_c = true;
    } else if (cmd.script_shell && !option && !cmd.here_string && word != "-" &&
               word.find_first_of("<>") == std::string::npos) {
      cmd.operand = true;  // a script file: the input is the script's data
    }
    if (cmd.interpreter && has_any(cmd.module_options)) cmd.saw_c = true;  // python -m: a module's code
    // xargs -I R, -IR, -i, --replace=R: the string its input replaces in the command.
    if (cmd.xargs && !cmd.script_shell && !name) {
      if (cmd.replace_next) {
        cmd.replace = word;
        cmd.replace_next = false;
      } else if (word == "-I") {
        cmd.replace_next = true;
      } else if (word.starts_with("-I") || word.starts_with("-i")) {
        cmd.replace = word.size() > 2 ? word.substr(2) : "{}";
      } else if (word.starts_with("--replace")) {
        cmd.replace = word.size() > 10 ? word.substr(10) : "{}";
      }
    }
    if (name || (cmd.wrapper && !cmd.script_shell)) {
      if (names_shell) cmd.script_shell = true;
      if (base.starts_with("python") || is_any({"perl", "node", "nodejs", "ruby"})) {
        cmd.script_shell = cmd.interpreter = true;
        cmd.program_options = base.starts_with("python") ? "c" : base.starts_with("node") ? "ep" : "eE";
        cmd.module_options = base.starts_with("python") ? "m" : "";
      }
      if (name && is_any({"sudo", "env", "nice", "nohup", "exec", "command", "time", "stdbuf", "timeout",
                          "srun", "flock", "setsid", "chrt", "taskset", "numactl", "ionice", "xargs"}))
        cmd.wrapper = true;
      if (name && base == "xargs") cmd.xargs = true;
      if (name && is_any({"declare", "typeset", "local", "export", "readonly"})) cmd.declare = true;
      if (name && is_any({"source", "."})) cmd.source = true;
    }
    if (cmd.declare && option && word.find('i') != std::string::npos) cmd.let = true;
    if (names_shell || is_any({"busybox", "su", "runuser", "flock", "script"})) cmd.shell = true;
    if (is_any({"eval", "ssh", "watch", "pdsh", "clush"}) && !cmd.all_arguments) {
      cmd.all_arguments = true;
      cmd.script.clear();
      cmd.refs.clear();
    }
    if (base == "let") cmd.let = true;
    cmd.here_string = false;
    ++cmd.words;
  }

  // NAME=... or NAME+=...: an assignment to NAME, if the word is one.
  static std::optional<std::string> assignment_name(std::string_view word) {
    const auto eq = word.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    auto name = word.substr(0, eq);
    if (name.ends_with('+')) name.remove_suffix(1);
    if (!is_shell_name(name)) return std::nullopt;
    return std::string(name);
  }

  // `name` is assigned a word holding `values`: a variable declared -i evaluates them as
  // arithmetic; any other keeps them, for where it is read (expansion()).
  void assign(const std::string& name, const std::vector<Pending>& values, bool declared_integer) {
    if (declared_integer) int_vars_.emplace(name);
    if (int_vars_.contains(name) && !violation_) {
      // As in arithmetic, what a command substitution prints is not the value itself.
      const auto it = std::ranges::find_if(values, [](const Pending& v) { return !v.printed; });
      if (it != values.end())
        violation_ = Violation{it->offset, it->name,
                               fmt::format("an assignment to {}, declared -i (integer) earlier, which bash "
                                           "evaluates as arithmetic",
                                           name)};
    }
    if (values.empty()) {
      tainted_.erase(name);
    } else {
      tainted_.insert_or_assign(name, values.front());
    }
  }

  // $name or ${name...} where name holds a placeholder's value: the value is where the
  // variable is read, into a pipeline's shell too; read as code, or run unquoted as a command
  // (split into a command and its arguments), it is refused.
  void expansion(std::string_view var) {
    const auto held = tainted_.find(var);
    if (held == tainted_.end()) return;
    const Pending p = held->second;
    carry(p.offset, p.name, p.printed);
    if (violation_) return;
    const auto& cmd = commands_.back();
    // n=$(find {{dir}} ...); $(( n + 1 )): as in arithmetic itself (and the -i rule), what a
    // command substitution printed is not the value.
    const bool printed_into_arithmetic = p.printed && (let_arguments() || arithmetic_frame());
    if (const auto why = code_context(); why && !printed_into_arithmetic) {
      violation_ =
          Violation{p.offset, p.name, fmt::format("${}, which is later read as code: {}", var, *why)};
    } else if (is_command_frame(stack_.back()) && cmd.word == "$" &&
               (cmd.words == cmd.assignments || (cmd.wrapper && !cmd.script_shell))) {
      violation_ =
          Violation{p.offset, p.name,
                    fmt::format("${}, which is later run as a command (unquoted, bash splits it into a "
                                "command and its arguments)",
                                var)};
    }
  }

  // Words are read where the command frame itself is being fed, or a quote directly above it.
  void track_words(std::string_view text, std::size_t i) {
    const char c = text[i];
    const Frame top = stack_.back();
    const auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
    if (top == Frame::heredoc_literal || top == Frame::heredoc_expanding) return;
    if (is_command_frame(top)) {
      const char prev = i > 0 ? text[i - 1] : '\0';
      auto& pipeline = pipelines_.back();
      if (c == '\n' && pipeline.after_pipe) return;
      if (text.compare(i, 2, "<<") == 0) return;  // a here-document or here-string: unquoted() reads it
      if (c == '#' && commands_.back().word.empty()) return;  // a comment, not a word
      if (c != ' ' && c != '\t' && c != '\n') pipeline.after_pipe = false;
      // A redirection's & (2>&1, &>) is part of a word, not a separator: the last branch keeps it.
      const bool redirection = c == '&' && (prev == '>' || prev == '<' || at(i + 1) == '>');
      if (c == ' ' || c == '\t') {
        end_word();
      } else if (c == '&' && prev == '|' && !redirection) {
        // |&: the pipe before it already ended the command
      } else if (c == '|' && at(i + 1) != '|' && prev != '|') {
        end_word();
        end_stage(true);
      } else if (word_boundary(c) && !redirection) {
        end_word();
        end_stage(false);  // a new command starts (a group's commands stay one stage)
        if (c == '(' && at(i + 1) != '(') ++pipelines_.back().groups;
        if (c == ')' && pipelines_.back().groups > 0) --pipelines_.back().groups;
      } else if (c == '{' && commands_.back().word.empty() && commands_.back().words == 0 &&
                 (at(i + 1) == ' ' || at(i + 1) == '\n')) {
        ++pipelines_.back().groups;
      } else if (c == '}' && commands_.back().word.empty() && commands_.back().words == 0 &&
                 pipelines_.back().groups > 0) {
        --pipelines_.back().groups;
      } else if (c == '\\' && i + 1 < text.size()) {
        if (text[i + 1] != '\n') word_char(text[i + 1]);  // a backslash-newline joins lines
      } else if (c != '\'' && c != '"' && !(c == '$' && (at(i + 1) == '\'' || at(i + 1) == '"'))) {
        word_char(c);  // quotes are not characters of the word, nor the $ of $'...' and $"..."
      }
    } else if (top == Frame::comment) {
      // its newline ends the command line: fed again once the comment is closed
    } else if (top == Frame::double_quoted && c == '\\') {
      // Inside double quotes a backslash quotes only $ ` " \ and a newline; the text a second
      // shell receives is the word with those removed.
      const char n = at(i + 1);
      if (n != '\n' && (n == '\0' || std::string_view("$`\"\\").find(n) == std::string_view::npos))
        word_char(c);
      if (n != '\n' && n != '\0') word_char(n);
    } else if (top == Frame::ansi_c && c == '\\') {
      const char n = at(i + 1);
      word_char(n == 'n' ? '\n' : n == 't' ? '\t' : n);
    } else if (!((top == Frame::single || top == Frame::ansi_c) && c == '\'') &&
               !(top == Frame::double_quoted && c == '"')) {
      word_char(c);
    }
  }

  const char* second_shell() const {
    // Every command level the placeholder is inside: a command string or eval's argument there
    // takes in what is below it (a command substitution's output included), unless single
    // quotes stop the outer shell from expanding it.
    std::size_t level = 0;
    for (std::size_t k = 0; k < stack_.size(); ++k) {
      if (!is_command_frame(stack_[k])) continue;
      const auto& cmd = commands_[level++];
      if (!cmd.command_string && !cmd.all_arguments) continue;
      bool single = false;
      for (std::size_t j = k + 1; j < stack_.size(); ++j)
        if (stack_[j] == Frame::single || stack_[j] == Frame::ansi_c) single = true;
      if (!single && cmd.program_text)
        return "the program of an interpreter's -c or -e (python -c, perl -e, node -e, ruby -e), which "
               "it runs as code";
      if (!single)
        return cmd.command_string
                   ? "the command string of a shell's -c (bash -c, sh -c...), which a second shell reads as "
                     "code"
                   : "an argument of eval, ssh, watch, pdsh or clush, which a second shell reads as code";
    }
    return nullptr;
  }

  bool let_arguments() const { return commands_.back().let; }

  std::size_t open_substitution(std::string_view text, std::size_t i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (text.compare(i, 3, "$((") == 0) {
      push(Frame::arithmetic);
      return 3;
    }
    if (c == '$' && next == '(') {
      push(Frame::command_sub);
      return 2;
    }
    if (c == '$' && next == '[') {
      push(Frame::arith_bracket);
      return 2;
    }
    if (c == '$' && next == '{') return open_parameter(text, i);
    if (c == '`') push(Frame::backtick);
    if (c == '$' && is_name_start(next)) {
      std::size_t j = i + 1;
      while (j < text.size() && is_name_char(text[j])) ++j;
      expansion(text.substr(i + 1, j - i - 1));  // the name is fed on as word characters
    }
    return 1;
  }

  // ${name...}: the name read ahead, then what follows it decides (a subscript, an offset, a word).
  std::size_t open_parameter(std::string_view text, std::size_t i) {
    std::size_t j = i + 2;
    const auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
    const bool value = at(j) != '#' && at(j) != '!';  // not a length or an indirection
    if ((at(j) == '#' || at(j) == '!') && at(j + 1) != '}') ++j;
    if (is_name_start(at(j))) {
      const auto start = j;
      while (is_name_char(at(j))) ++j;
      if (value) expansion(text.substr(start, j - start));
    } else if (std::isdigit(static_cast<unsigned char>(at(j))) != 0) {
      while (std::isdigit(static_cast<unsigned char>(at(j))) != 0) ++j;
    } else if (at(j) != '\0' && std::string_view("@*#?-$!").find(at(j)) != std::string_view::npos) {
      ++j;
    }
    push(Frame::param_word);
    if (at(j) == '[') {
      push(Frame::subscript);
      return j + 1 - i;
    }
    if (at(j) == ':' && std::string_view("-=+?").find(at(j + 1)) == std::string_view::npos) {
      stack_.back() = Frame::param_offset;
      return j + 1 - i;
    }
    return j - i;
  }

  std::size_t unquoted(std::string_view text, std::size_t i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    const bool word_start = i == 0 || word_boundary(text[i - 1]);
    if (c == '\\') return 2;
    if (c == '\'') {
      push(Frame::single);
      return 1;
    }
    if (c == '"') {
      push(Frame::double_quoted);
      return 1;
    }
    if (c == '$' && next == '\'') {
      push(Frame::ansi_c);
      return 2;
    }
    if (c == '#' && word_start) {
      push(Frame::comment);
      return 1;
    }
    if (text.compare(i, 3, "<<<") == 0) {
      end_word();
      commands_.back().here_string = true;
      return 3;
    }
    if (c == '<' && next == '<') return open_heredoc(text, i);
    if ((c == '<' || c == '>') && next == '(') {
      const bool script = c == '<' && commands_.back().script_operand_next();
      push(Frame::process_sub);
      pipelines_.back().runs_as_script = script;
      return 2;
    }
    if (c == '(' && next == '(') {  // the (( )) command (a subshell in a subshell is written "( (")
      push(Frame::arithmetic);
      return 2;
    }
    if (c == '[' && next == '[' && word_start &&
        (i + 2 >= text.size() || text[i + 2] == ' ' || text[i + 2] == '\t')) {
      push(Frame::test);
      return 2;
    }
    if (c == '[' && name_before(text, i)) {  // name[subscript], as in an assignment or unset
      push(Frame::subscript);
      return 1;
    }
    return open_substitution(text, i);
  }

  // <<EOF, <<-EOF, <<'EOF'...: the delimiter is read now, the body after the line ends.
  std::size_t open_heredoc(std::string_view text, std::size_t i) {
    end_word();
    Heredoc h;
    std::size_t j = i + 2;
    if (j < text.size() && text[j] == '-') {
      h.strip_tabs = true;
      ++j;
    }
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
    for (; j < text.size() && !word_boundary(text[j]) && text[j] != '<' && text[j] != '>'; ++j) {
      if (text[j] == '\'' || text[j] == '"' || text[j] == '\\') {
        h.quoted = true;
      } else {
        h.delimiter += text[j];
      }
    }
    h.stage = pipelines_.back().stage;
    pipelines_.back().heredocs.push_back(std::move(h));
    return j - i;
  }

  static bool name_before(std::string_view text, std::size_t i) {
    std::size_t j = i;
    while (j > 0 && is_name_char(text[j - 1])) --j;
    return j < i && is_name_start(text[j]) && (j == 0 || word_boundary(text[j - 1]));
  }

  std::vector<Frame> stack_{Frame::top};
  std::vector<Command> commands_{Command{}};
  std::vector<Pipeline> pipelines_{Pipeline{}};
  std::vector<Heredoc> bodies_queued_;  // opened on the line being read
  std::vector<Heredoc> bodies_open_;    // by the here-document frames on the stack
  std::optional<Violation> violation_;
  int depth_ = 0;                  // how many shells down this script is read (read_script())
  std::vector<std::size_t> bare_;  // see bare()
  std::map<std::string, Pending, std::less<>> tainted_;  // variables holding a placeholder's value
  std::set<std::string, std::less<>> int_vars_;          // variables declared -i
};

constexpr const char* not_code_hint =
    "only whole numbers (digits, an optional '-', no leading zero) may be placed there; pass the value "
    "another way: as an argument after a command string (\"$1\" there), or by the exported "
    "\"$TRNSLURM_...\" quoted where the script only expands it; keep a command in an array "
    "(cmd=(ls {{x}}); \"${cmd[@]}\"); compute outside arithmetic";

// The error for a placeholder the tracker refused, at the placeholder.
std::unexpected<Error> refusal(const QuoteTracker::Violation& v, std::string_view value,
                               std::string_view text, const TextOrigin& origin) {
  if (v.unplaced)
    return fail(fmt::format("'{{{{{}}}}}' is in {}: its value would not be placed", v.name, v.why),
                where_in(text, v.offset, origin),
                "write the delimiter unquoted (<<EOF) so the body is expanded, or read the variable the "
                "placeholder stands for in the program the here-document feeds");
  return fail(fmt::format("'{{{{{}}}}}' is in {}, and its value '{}' is not a whole number", v.name, v.why,
                          printable(value, 200)),
              where_in(text, v.offset, origin), not_code_hint);
}

}  // namespace

Result<std::string> render_template(std::string_view text, const TemplateValues& values,
                                    const TextOrigin& origin, Substitution how,
                                    std::vector<std::string>* used) {
  std::string out;
  out.reserve(text.size());
  QuoteTracker quotes;
  std::vector<std::pair<std::size_t, std::size_t>> references;  // quoted ones: offset, where in `out`
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
      if (quotes.violation()) break;
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
      const bool whole = is_whole_number(found->second);
      if (const auto v = quotes.judge(text, i, close + 2, i, name, whole))
        return refusal(*v, found->second, text, origin);
      quotes.placeholder(i, name, whole);
      const auto var = variable_for(name);
      const bool quoted = quotes.context() != QuoteTracker::Context::double_quoted;
      if (quoted) references.emplace_back(i, out.size());
      out += quoted ? "\"${" + var + "}\"" : "${" + var + "}";
    } else {
      out += found->second;
    }
    if (used != nullptr) used->emplace_back(name);
    i = close + 2;
  }
  if (how == Substitution::variables) {
    quotes.finish();
    if (const auto& v = quotes.violation()) return refusal(*v, values.find(v->name)->second, text, origin);
    // A reference a second script holds in its double quotes or here-document loses its quotes
    // (they would be characters there); one pass over the text, whatever the count.
    if (!quotes.bare().empty()) {
      auto bare = quotes.bare();
      std::ranges::sort(bare);
      std::string patched;
      patched.reserve(out.size());
      std::size_t from = 0;
      for (const auto& [offset, at] : references) {
        if (!std::ranges::binary_search(bare, offset)) continue;
        const auto close = out.find('"', at + 1);
        patched.append(out, from, at - from);
        patched.append(out, at + 1, close - at - 1);
        from = close + 1;
      }
      patched.append(out, from);
      out = std::move(patched);
    }
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
