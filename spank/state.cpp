#include "state.hpp"

#include <unistd.h>

#include <array>

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

std::string node_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  std::string name(buf.data());
  if (const auto dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  return name;
}

}  // namespace trnslurm::spank
