#include "commands.hpp"

namespace trnslurm::cli {

std::vector<Command> register_commands(CLI::App& app) {
  return {add_init(app), add_recipes(app), add_plan(app), add_submit(app), add_status(app), add_watch(app),
          add_logs(app), add_cancel(app),  add_list(app), add_env(app),    add_doctor(app)};
}

}  // namespace trnslurm::cli
