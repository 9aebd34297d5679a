#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/error.hpp"

namespace trnslurm {

// What Slurm tells us about one task. The plugin fills it from spank_get_item; `trnslurm env`
// fills it from the command line. Nothing here depends on Slurm's headers.
struct TaskContext {
  std::uint32_t node_id = 0;       // S_JOB_NODEID
  std::uint32_t nnodes = 1;        // S_JOB_NNODES
  std::uint32_t local_id = 0;      // S_TASK_ID
  std::uint32_t local_count = 1;   // S_JOB_LOCAL_TASK_COUNT
  std::uint32_t global_id = 0;     // S_TASK_GLOBAL_ID
  std::uint32_t total_tasks = 1;   // S_JOB_TOTAL_TASK_COUNT
};

// One variable to set, and why: `trnslurm env --explain` prints the reason.
struct EnvVar {
  std::string name;
  std::string value;
  std::string reason;
};

// The settings that decide what a task gets (plugstack defaults, then srun/#SBATCH options).
struct EnvSettings {
  bool enabled = true;  // --trn-env=off touches nothing
};

// Parses the value of --trn-env: "on" or "off". Shared by the plugin and the CLI so both
// refuse the same values with the same words.
Result<bool> parse_env_switch(std::string_view value);

std::vector<EnvVar> task_environment(const TaskContext& task, const EnvSettings& settings);

}  // namespace trnslurm
