#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// Where a template's text starts in its source file, so an error inside it can be reported at
// file:line:column (line and column of the template's first character, both from 1).
struct TextOrigin {
  std::string file;
  std::uint32_t line = 1;
  std::uint32_t column = 1;
};

using TemplateValues = std::map<std::string, std::string, std::less<>>;

enum class Substitution {
  // Each placeholder becomes a reference to a shell variable (variable_for(name)) that the
  // script exports, single-quoted, at its top: "${V}" where the template is unquoted or inside
  // single quotes (a nested `bash -c '...'` then expands it from the environment), ${V} inside
  // double quotes and here-documents, the inner shell's of a single-quoted command string too. No value is
  // ever parsed as shell code, whatever it holds and even where the
  // quoting context is misjudged (the worst case is word splitting).
  variables,
  raw,  // values inserted as they are (the caller quotes the whole result)
};

// One shell word that stands for `value` literally in bash: single quotes, with each ' written
// as '\''. Refuses what no quoting can carry safely: NUL, and control characters other than tab
// and newline (a carriage return or an escape sequence in a job script is never intended).
Result<std::string> shell_quote(std::string_view value);

// shell_quote(), except that a value of only letters, digits and _-.,:/@+= (nothing a shell
// treats specially) stays bare: `NAME=value` lines that read as they would in `env`.
Result<std::string> shell_word(std::string_view value);

// Is `name` a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*)?
bool is_shell_name(std::string_view name);

// The variable a placeholder stands for: TRNSLURM_ + the name in upper case, '.' -> '_'.
std::string variable_for(std::string_view name);

// Why a stage's `env` may not set `name`, when it may not: TRNSLURM_* is trnslurm's own (the
// placeholders' variables, the run directory, the pre-flight program...) but for the CPU
// stand-ins' TRNSLURM_STANDIN_* knobs, and bash's read-only
// variables (UID, EUID, PPID, BASHOPTS, SHELLOPTS, BASH_VERSINFO) fail the job script when set.
std::optional<std::string> reserved_variable(std::string_view name);

// Renders `text`: `{{name}}` (spaces inside the braces allowed) is replaced (see Substitution);
// `\{{` is a literal `{{`. Names are [A-Za-z_][A-Za-z0-9_.]*. An unknown name or an
// unterminated `{{` is an error at the placeholder's file:line:column. The names used are
// added to `used` when given. Under Substitution::variables a placeholder where bash reads its
// value as code whatever the quotes must hold a whole number, and any other value is refused at
// the placeholder's position: arithmetic (`$(( ))`, `(( ))`, `$[ ]`, array subscripts,
// `${v:offset:length}`, `let`, `declare -i`, `[[ ]]` beside -eq, -lt, ... or -v), where
// evaluating runs the command substitutions of a subscript (`a[$(cmd)]`), and an assignment to a
// variable declared -i earlier; a second shell's code (the command string of `bash -c` or
// `sh -c` and the arguments of eval or ssh, where the outer shell expands the value; a
// single-quoted one is read as a script of its own, by these same rules), an interpreter's
// program (`python -c`, `perl -e`); a variable holding a value where it is read as code or run
// unquoted as a command (`cmd="ls {{x}}"; $cmd`); and a shell's or interpreter's input (a
// pipeline into `bash` or `python`, a here-string or here-document one reads, `bash <(...)`,
// `xargs -I{} sh -c '... {}'`). A here-document's body is expanded like double quotes, as is the
// inner shell's where the reference is inside its double quotes (the reference is then placed
// without quotes); a placeholder in a here-document whose delimiter is quoted is refused whatever
// its value (it would stay text).
Result<std::string> render_template(std::string_view text, const TemplateValues& values,
                                    const TextOrigin& origin, Substitution how = Substitution::variables,
                                    std::vector<std::string>* used = nullptr);

// Where the text of a TOML string value starts, given where the value itself starts (the
// opening quote, at `line`:`column` of `toml_text`): after """ and the newline TOML trims,
// or after the quote. Escapes before a placeholder on the first line shift its column.
TextOrigin string_value_origin(std::string_view toml_text, std::string file, std::uint32_t line,
                               std::uint32_t column);

}  // namespace trnslurm
