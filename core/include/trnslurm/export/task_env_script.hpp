#pragma once
// What the plugin sets on a node, for a scheduler that runs no plugin (docs/export.md): the same
// task_environment() decision, taken when the recipe is exported for a node of the recipe's
// instance type, written as the shell function the exported entry point calls for each step.

#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/node/settings.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The srun options an exported stage's command may use: one task per node, which is what each
// node of the other scheduler runs. The entry point refuses any other, and so does the export.
const std::vector<std::string_view>& exported_srun_options();

// task-env.sh: TRN_SRUN_OPTIONS, and `trn_task_env LAUNCH` ("default", or "torchrun" for an srun
// with --trn-launch=torchrun), which exports what task_environment() decides on one node of
// `type` (its devices, cores and EFA interfaces from the instance table) with `settings`, each
// variable only when the environment does not have it already, as the plugin does. The node's
// place comes from the entry point when it runs: MASTER_ADDR from TRN_MAIN_ADDR,
// TRNSLURM_NODE_RANK from TRN_NODE_INDEX, TRNSLURM_NNODES from TRN_NUM_NODES.
Result<std::string> task_env_script(const InstanceType& type, const EnvSettings& settings);

}  // namespace trnslurm
