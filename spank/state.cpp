#include "state.hpp"

#include "trnslurm/util/printable.hpp"

namespace trnslurm::spank {

State& state() {
  static State s;
  return s;
}

void log_error(const std::string& msg) noexcept {
  slurm_error("trnslurm: %s", printable(msg).c_str());
}
void log_info(const std::string& msg) noexcept {
  slurm_info("trnslurm: %s", printable(msg).c_str());
}
void log_verbose(const std::string& msg) noexcept {
  slurm_verbose("trnslurm: %s", printable(msg).c_str());
}

}  // namespace trnslurm::spank
