#pragma once
// The CLI's one printing style: fmt to stdout for results; errors and warnings on stderr in one
// format, which docs/cli.md shows.

#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm::cli {

// "trnslurm: where: what", then "  hint: how to fix it" when there is a hint.
void print_error(const Error& error);

// "warning: text".
void print_warning(std::string_view text);

}  // namespace trnslurm::cli
