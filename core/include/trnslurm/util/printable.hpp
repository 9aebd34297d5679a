#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trnslurm {

// Text safe for one log line, whoever wrote it: a user's option value or environment variable
// can reach slurmd's log through the plugin's messages, and must not forge a second line there
// or fill it. Control characters (newline, carriage return, escape...) are written as \n, \r, \t
// or \xNN, a backslash as \\, and the result is cut at `max` bytes with "..." appended.
std::string printable(std::string_view text, std::size_t max = 1024);

// Where `text` holds what a job script, a manifest (JSON) or a terminal cannot carry as given: a
// byte that is not part of valid UTF-8, or a control character (C0, DEL, C1) other than tab and
// newline. The one rule for every value a user gives (recipe strings, --set, --dataset, paths).
struct Unrepresentable {
  std::size_t offset;  // byte offset in the text
  std::string what;    // "a byte that is not UTF-8 (0xff)", "a control character (\x1b)"
};
std::optional<Unrepresentable> find_unrepresentable(std::string_view text);

}  // namespace trnslurm
