#pragma once
// The CLI's one printing style: fmt to stdout for results; errors and warnings on stderr in one
// format, which docs/cli.md shows.

#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm::cli {

// "trnslurm: where: what", then "  hint: how to fix it" when there is a hint.
void print_error(const Error& error);

// Prints `error` and returns its kind's exit code (exit_codes.hpp); an error without a kind of its
// own is taken as `otherwise`, what a failure of the caller's step means.
int exit_with(const Error& error, ErrorKind otherwise);

// "warning: text".
void print_warning(std::string_view text);

}  // namespace trnslurm::cli
