#include "trnslurm/util/error.hpp"

namespace trnslurm {

std::string to_string(const Error& e) {
  std::string out;
  if (!e.where.empty()) out += e.where + ": ";
  out += e.what;
  if (!e.hint.empty()) out += " (" + e.hint + ")";
  return out;
}

}  // namespace trnslurm
