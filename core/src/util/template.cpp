#include "trnslurm/util/template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
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

// Bash's quoting context at a point of a script, approximately, and the places where no quoting
// helps because bash reads a value as code there (issue 31):
// - arithmetic: $(( )), (( )), $[ ], an array subscript (a[...], ${a[...]}), a substring's
//   offset and length (${v:offset:length}), the arguments of `let`: bash evaluates the value as
//   an expression, and evaluating expands array subscripts again (`a[$(cmd)]` runs cmd);
// - [[ ]] beside an arithmetic comparison (-eq, -lt, ...) or after -v: the same evaluation;
// - a second shell's code: the command string of `bash -c` (sh, dash, zsh, ksh, su, flock...),
//   the arguments of eval, ssh, watch, pdsh and clush, unless single quotes keep the outer shell
//   from expanding the reference there (the inner shell then expands it from the environment);
// - a shell's input: what a pipeline's earlier commands print into a shell that reads its
//   script from stdin (`echo {{x}} | bash`), a here-string to one (`bash <<< {{x}}`) and the
//   body of a here-document one reads (`bash <<EOF`, or `cat <<EOF | sh`). These are known only
//   once the pipeline is read: the tracker keeps the placeholders of a pipeline and reports
//   the first one a later shell reads (violation()).
// A here-document's body is expanded as in double quotes (no quotes needed, none added); one
// with a quoted delimiter (<<'EOF') expands nothing, so a placeholder there is refused.
// Not recognised (docs/security.md says so): an assignment to a variable declared -i earlier,
// a command string built in a variable first, arithmetic inside a single-quoted command string
// or a quoted here-document that a shell reads, and pipelines through a `{ }` group into a
// shell across lines.
class QuoteTracker {
 public:
  enum class Context { unquoted, single, double_quoted };

  // A placeholder refused wherever it is, found once the pipeline or here-document around it
  // was read: its offset in the template, its name, and why.
  struct Violation {
    std::size_t offset;
    std::string name;
    std::string why;
  };

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
          break;
      }
      break;
    }
    if (const auto* c = second_shell()) return c;
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
    word_char('\x01');
    if (whole_number) return;
    const bool input = commands_.back().here_string;  // a here-string is its command's input
    pipelines_.back().pending.push_back({offset, std::string(name), pipelines_.back().stage, input});
    pipelines_.back().inside.push_back({offset, std::string(name), 0, false});
  }

  // The first placeholder found to be read by a shell, once found.
  const std::optional<Violation>& violation() const { return violation_; }

  // The end of the text ends every pipeline still open.
  void finish() {
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
    std::size_t stage;  // the pipeline's command it is in
    bool input;         // in that command's input (a here-string), not its arguments
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
    bool after_pipe = false;  // only blanks since the last |: a newline there continues it
  };

  // The words of the simple command being read, at one level of command (the script, a command
  // substitution): enough to know a second shell's command string and eval's arguments.
  struct Command {
    std::string word;             // the current word's text, quotes removed
    std::size_t words = 0;        // words ended so far
    bool shell = false;           // a word so far names a shell (or su, flock...)
    bool command_string = false;  // the current word is the command string of -c
    bool all_arguments = false;   // eval, ssh...: every word after is read by a shell
    bool let = false;             // let, declare -i: every word after is arithmetic
    bool declare = false;         // declare, typeset, local, export, readonly: -i makes it let
    bool wrapper = false;         // sudo, env, srun, timeout...: runs the command after it
    bool script_shell = false;    // the command run is a shell (sh, bash...)
    bool saw_c = false;           // ... given its script by -c
    bool operand = false;         // ... or by a file named after it
    bool here_string = false;     // the next word is the command's input (<<<)
    bool reads_script() const { return script_shell && !saw_c && !operand; }
  };

  static bool is_command_frame(Frame f) {
    return f == Frame::top || f == Frame::command_sub || f == Frame::backtick;
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
      // What a command substitution prints is part of the command around it.
      auto inside = std::move(pipelines_.back().inside);
      commands_.pop_back();
      pipelines_.pop_back();
      auto& outer = pipelines_.back();
      for (auto& p : inside) {
        outer.pending.push_back({p.offset, p.name, outer.stage, commands_.back().here_string});
        outer.inside.push_back(std::move(p));
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
    commands_.back() = Command{};
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
    commands_.back().word += direct ? c : '\x01';
  }

  void end_word() {
    auto& cmd = commands_.back();
    if (cmd.word.empty()) return;
    const std::string_view word = cmd.word;
    const auto slash = word.rfind('/');
    const auto base = slash == std::string_view::npos ? word : word.substr(slash + 1);
    const bool option = word.size() > 1 && word.front() == '-' && word[1] != '-' &&
                        std::ranges::all_of(word.substr(1), [](char ch) {
                          return std::isalpha(static_cast<unsigned char>(ch)) != 0;
                        });
    const auto is_any = [&](std::initializer_list<std::string_view> names) {
      return std::ranges::find(names, base) != names.end();
    };
    const bool names_shell = is_any({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"});
    if (cmd.command_string) {
      cmd.command_string = false;  // the command string ended; what follows are its $0, $1...
    } else if (cmd.shell && option && word.find('c') != std::string_view::npos) {
      cmd.command_string = true;
      cmd.saw_c = true;
    } else if (cmd.script_shell && !option && !cmd.here_string &&
               word.find_first_of("<>") == std::string_view::npos) {
      cmd.operand = true;  // a script file: the input is the script's data
    }
    if (cmd.words == 0 || (cmd.wrapper && !cmd.script_shell)) {
      if (names_shell) cmd.script_shell = true;
      if (cmd.words == 0 && is_any({"sudo", "env", "nice", "nohup", "exec", "command", "time", "stdbuf",
                                    "timeout", "srun", "flock", "setsid", "chrt", "taskset", "numactl"}))
        cmd.wrapper = true;
      if (cmd.words == 0 && is_any({"declare", "typeset", "local", "export", "readonly"})) cmd.declare = true;
    }
    if (cmd.declare && option && word.find('i') != std::string_view::npos) cmd.let = true;
    if (names_shell || is_any({"busybox", "su", "runuser", "flock", "script"})) cmd.shell = true;
    if (is_any({"eval", "ssh", "watch", "pdsh", "clush"})) cmd.all_arguments = true;
    if (base == "let") cmd.let = true;
    cmd.here_string = false;
    ++cmd.words;
    cmd.word.clear();
  }

  // Words are read where the command frame itself is being fed, or a quote directly above it.
  void track_words(std::string_view text, std::size_t i) {
    const char c = text[i];
    const Frame top = stack_.back();
    if (top == Frame::heredoc_literal || top == Frame::heredoc_expanding) return;
    if (is_command_frame(top)) {
      const auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
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
        word_char(text[i + 1]);
      } else if (c != '\'' && c != '"') {
        word_char(c);
      }
    } else if (top == Frame::comment) {
      // its newline ends the command line: fed again once the comment is closed
    } else if (!(top == Frame::single && c == '\'') && !(top == Frame::double_quoted && c == '"')) {
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
    return 1;
  }

  // ${name...}: the name read ahead, then what follows it decides (a subscript, an offset, a word).
  std::size_t open_parameter(std::string_view text, std::size_t i) {
    std::size_t j = i + 2;
    const auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
    if ((at(j) == '#' || at(j) == '!') && at(j + 1) != '}') ++j;
    if (is_name_start(at(j))) {
      while (is_name_char(at(j))) ++j;
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
};

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

constexpr const char* not_code_hint =
    "only whole numbers (digits, an optional '-', no leading zero) may be placed there; pass the value "
    "another "
    "way: a script a second shell reads can expand the exported \"$TRNSLURM_...\" itself (in a single-quoted "
    "command string, or a here-document whose delimiter is quoted), an argument after a command string is "
    "$1; "
    "compute outside arithmetic";

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
      if (const auto none = quotes.unexpanded()) {
        return fail(fmt::format("'{{{{{}}}}}' is in {}: its value would not be placed", name, *none),
                    where_in(text, i, origin),
                    "write the delimiter unquoted (<<EOF) so the body is expanded, or read the variable the "
                    "placeholder stands for in the program the here-document feeds");
      }
      auto code = quotes.code_context();
      if (!code && quotes.in_test() && beside_arithmetic_test(text, i, close + 2))
        code = "an arithmetic comparison of [[ ]] (-eq, -lt, ... or -v), which bash evaluates as code";
      if (code && !is_whole_number(found->second)) {
        return fail(fmt::format("'{{{{{}}}}}' is in {}, and its value '{}' is not a whole number", name,
                                *code, printable(found->second, 200)),
                    where_in(text, i, origin), not_code_hint);
      }
      quotes.placeholder(i, name, is_whole_number(found->second));
      const auto var = variable_for(name);
      out +=
          quotes.context() == QuoteTracker::Context::double_quoted ? "${" + var + "}" : "\"${" + var + "}\"";
    } else {
      out += found->second;
    }
    if (used != nullptr) used->emplace_back(name);
    i = close + 2;
  }
  if (how == Substitution::variables) {
    quotes.finish();
    if (const auto& v = quotes.violation()) {
      const auto& value = values.find(v->name)->second;
      return fail(fmt::format("'{{{{{}}}}}' is in {}, and its value '{}' is not a whole number", v->name,
                              v->why, printable(value, 200)),
                  where_in(text, v->offset, origin), not_code_hint);
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
