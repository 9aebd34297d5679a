#pragma once
// Colour on a terminal only, and never when NO_COLOR is set (https://no-color.org): the one
// place that decides, so every command follows the same convention (docs/cli.md).
#include <cstdio>
#include <string>
#include <string_view>

namespace trnslurm::cli {

enum class Colour { none, red, green, yellow };

// True when `stream` is a terminal, NO_COLOR is unset or empty, and TERM is not "dumb".
bool colour_enabled(std::FILE* stream);

// `text` wrapped in the colour's escape codes when `enabled`, else `text` unchanged.
std::string paint(std::string_view text, Colour colour, bool enabled);

// The colour of a job phase or chain verdict ("succeeded", "running", "failed", ...) or a doctor
// tag ("ok", "warn", "FAIL"): green done, yellow waiting, red failed.
Colour state_colour(std::string_view phase);

}  // namespace trnslurm::cli
