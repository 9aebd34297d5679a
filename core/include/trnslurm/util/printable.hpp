#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trnslurm {

// Text safe for one log line, whoever wrote it: a user's option value or environment variable
// can reach slurmd's log through the plugin's messages, and must not forge a second line there
// or fill it. Control characters (newline, carriage return, escape...) are written as \n, \r, \t
// or \xNN, a backslash as \\, and the result is cut at `max` bytes with "..." appended.
std::string printable(std::string_view text, std::size_t max = 1024);

}  // namespace trnslurm
