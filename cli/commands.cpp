#include "commands.hpp"

namespace trnslurm::cli {

std::vector<Command> register_commands(CLI::App& app) {
  (void)app;
  return {};
}

}  // namespace trnslurm::cli
