#include "commands.hpp"

namespace trnslurm::cli {

std::vector<Command> register_commands(CLI::App& app) {
  return {add_init(app), add_recipes(app), add_plan(app), add_env(app), add_doctor(app)};
}

}  // namespace trnslurm::cli
