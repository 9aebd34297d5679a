#include "output.hpp"

#include <fmt/format.h>

namespace trnslurm::cli {

void print_error(const Error& error) {
  fmt::print(stderr, "trnslurm: {}{}\n", error.where.empty() ? "" : error.where + ": ", error.what);
  if (!error.hint.empty()) fmt::print(stderr, "  hint: {}\n", error.hint);
}

void print_warning(std::string_view text) {
  fmt::print(stderr, "warning: {}\n", text);
}

}  // namespace trnslurm::cli
