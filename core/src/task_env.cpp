#include "trnslurm/task_env.hpp"

#include <fmt/format.h>

namespace trnslurm {

Result<bool> parse_env_switch(std::string_view value) {
  if (value == "on") return true;
  if (value == "off") return false;
  return fail(fmt::format("invalid value '{}'", value), "--trn-env", "use --trn-env=on or --trn-env=off");
}

std::vector<EnvVar> task_environment(const TaskContext& task, const EnvSettings& settings) {
  std::vector<EnvVar> env;
  if (!settings.enabled) return env;
  env.push_back({"TRNSLURM_NODE_RANK", std::to_string(task.node_id),
                 fmt::format("node {} of the step's {} nodes (torchrun --node_rank)", task.node_id, task.nnodes)});
  return env;
}

}  // namespace trnslurm
