#include "exit_codes.hpp"

namespace trnslurm::cli {

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::input:
      return exit_usage;
    case ErrorKind::internal:
      return exit_internal;
    case ErrorKind::unclassified:
    case ErrorKind::slurm:
    case ErrorKind::upstream:
    case ErrorKind::local:
    case ErrorKind::refused:
    case ErrorKind::interrupted:
      return exit_failure;
  }
  return exit_internal;
}

}  // namespace trnslurm::cli
