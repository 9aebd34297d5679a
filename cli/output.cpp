#include "output.hpp"

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "trnslurm/util/printable.hpp"

namespace trnslurm::cli {

// An error or warning quotes what it refuses: a file's bytes, an argument, another program's
// output. Control characters are escaped (no terminal escapes, no forged second line) and each
// part is cut at a few KiB (a message stays a message).
constexpr std::size_t max_part = 4096;

void print_error(const Error& error) {
  fmt::print(stderr, "trnslurm: {}{}\n", error.where.empty() ? "" : printable(error.where, max_part) + ": ",
             printable(error.what, max_part));
  if (!error.hint.empty()) fmt::print(stderr, "  hint: {}\n", printable(error.hint, max_part));
}

int exit_with(const Error& error, ErrorKind otherwise) {
  print_error(error);
  return exit_code(classified(error, otherwise).kind);
}

void print_warning(std::string_view text) {
  fmt::print(stderr, "warning: {}\n", printable(text, max_part));
}

}  // namespace trnslurm::cli
