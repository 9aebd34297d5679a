#include "commands.hpp"

namespace trnslurm::cli {

std::vector<Command> register_commands(CLI::App& app) {
  return {add_env(app), add_doctor(app)};
}

}  // namespace trnslurm::cli
