#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/rendezvous.hpp"
#include "trnslurm/node/settings.hpp"
#include "trnslurm/node/topology.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// What Slurm tells us about one task. The plugin fills it from spank_get_item; `trnslurm env`
// fills it from the command line. Nothing here depends on Slurm's headers.
struct TaskContext {
  std::uint32_t node_id = 0;      // S_JOB_NODEID
  std::uint32_t nnodes = 1;       // S_JOB_NNODES
  std::uint32_t local_id = 0;     // S_TASK_ID
  std::uint32_t local_count = 1;  // S_JOB_LOCAL_TASK_COUNT
  std::uint32_t global_id = 0;    // S_TASK_GLOBAL_ID
  std::uint32_t total_tasks = 1;  // S_JOB_TOTAL_TASK_COUNT
};

// One variable, its value and why: `trnslurm env --explain` and --trn-verbose print the reason.
struct EnvVar {
  std::string name;
  std::string value;
  std::string reason;
  // Differs between the tasks of one node (NEURON_RT_VISIBLE_CORES per task, RANK, LOCAL_RANK).
  // The plugin sets the others once per node and step, in user_init, for all the node's tasks:
  // every spank_setenv costs slurmstepd a 256 KiB buffer, so fewer of them in each task's path.
  bool per_task = false;
};

// Everything the decision depends on, as values: the same function runs in slurmstepd and in
// `trnslurm env`, and unit tests call it without Slurm.
struct EnvInput {
  TaskContext task;
  EnvSettings settings;
  Topology topology;
  NodeInstance instance;  // node_instance(topology, the site's file): LNC and cores come from it
  EfaProbe efa;
  Rendezvous master;
  std::string hostname;                                      // this node, for a per-host compile cache
  std::map<std::string, std::string, std::less<>> user_env;  // what the task's environment already has
  // Variables of the task's environment that trnslurm set for the step this one was started from
  // (an interactive step, an srun inside a step): not the user's, decided again. The front end
  // removes them (and the old mark) before setting the new values. Not in user_env.
  std::vector<std::string> inherited;
};

struct EnvPlan {
  std::vector<EnvVar> set;         // to set: not in the user's environment
  std::vector<EnvVar> kept;        // in the user's environment already: left alone (value = the user's)
  std::vector<std::string> notes;  // what was deliberately not set, and why
};

// The task's environment. Precedence: the user's environment > srun/#SBATCH option > plugstack
// default > built-in default. Refuses (an Error) when the cores asked for do not fit the node.
Result<EnvPlan> task_environment(const EnvInput& in);

// The names task_environment() may set or reads: the front ends look these up in the task's
// environment to fill EnvInput::user_env.
const std::vector<std::string_view>& considered_variables();

// The mark of what trnslurm set: every task gets TRNSLURM_SET, "NAME:HASH,..." with a 64-bit
// FNV-1a hash (16 hex digits) of each value it set. An srun started from that task (or from the
// interactive step) inherits those variables; the mark tells them from the user's own, and only
// a variable whose value is still the one trnslurm set counts as trnslurm's.
inline constexpr std::string_view set_mark_variable = "TRNSLURM_SET";
std::string set_mark(const std::vector<EnvVar>& set);

// Moves out of `in.user_env` into `in.inherited` every variable that `mark` (the value of
// TRNSLURM_SET in the task's environment) lists with the value it still has.
void separate_inherited(EnvInput& in, std::string_view mark);

}  // namespace trnslurm
