#pragma once

#include <cstdint>
#include <functional>
#include <map>
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
  // double quotes. No value is ever parsed as shell code, whatever it holds and even where the
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

// Renders `text`: `{{name}}` (spaces inside the braces allowed) is replaced (see Substitution);
// `\{{` is a literal `{{`. Names are [A-Za-z_][A-Za-z0-9_.]*. An unknown name or an
// unterminated `{{` is an error at the placeholder's file:line:column. The names used are
// added to `used` when given. Under Substitution::variables a placeholder inside `$(( ))` or
// `(( ))` must hold a whole number: bash evaluates a value there as arithmetic, which runs the
// command substitutions of an array subscript (`a[$(cmd)]`) whatever the quotes; any other value
// is refused at the placeholder's position.
Result<std::string> render_template(std::string_view text, const TemplateValues& values,
                                    const TextOrigin& origin, Substitution how = Substitution::variables,
                                    std::vector<std::string>* used = nullptr);

// Where the text of a TOML string value starts, given where the value itself starts (the
// opening quote, at `line`:`column` of `toml_text`): after """ and the newline TOML trims,
// or after the quote. Escapes before a placeholder on the first line shift its column.
TextOrigin string_value_origin(std::string_view toml_text, std::string file, std::uint32_t line,
                               std::uint32_t column);

}  // namespace trnslurm
