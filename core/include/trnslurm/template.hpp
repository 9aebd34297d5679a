#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "trnslurm/error.hpp"

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
  shell_quoted,  // each value becomes one shell word: '...' (script bodies)
  raw,           // values inserted as they are (the caller quotes the whole result)
};

// One shell word that stands for `value` literally in bash: single quotes, with each ' written
// as '\''. Refuses what no quoting can carry safely: NUL, and control characters other than tab
// and newline (a carriage return or an escape sequence in a job script is never intended).
Result<std::string> shell_quote(std::string_view value);

// Is `name` a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*)?
bool is_shell_name(std::string_view name);

// Renders `text`: `{{name}}` (spaces inside the braces allowed) becomes the value of `name`,
// shell-quoted or raw; `\{{` is a literal `{{`. Names are [A-Za-z_][A-Za-z0-9_.]*. An unknown
// name, an unterminated `{{`, or a quoted placeholder ("{{x}}": the quotes would end up in the
// value) is an error at the placeholder's file:line:column.
Result<std::string> render_template(std::string_view text, const TemplateValues& values,
                                    const TextOrigin& origin, Substitution how = Substitution::shell_quoted);

}  // namespace trnslurm
