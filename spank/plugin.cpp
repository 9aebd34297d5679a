// The exported SPANK hooks, and nothing else: each one forwards to the core inside a guard so
// that no exception ever reaches slurmstepd, srun or sbatch.
//
// Where a failure lands matters (docs/ARCHITECTURE.md, "The plugin"): a bad option value is
// refused in the local/allocator context, where it only refuses the submission; in the remote
// context init and user_init never fail on user input (that would drain the node), and an error
// seen there is raised in task_init, which fails the job cleanly.
extern "C" {
#include <slurm/spank.h>
}

#include <array>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "trnslurm/task_env.hpp"

// Everything else is hidden (-fvisibility=hidden and exports.map): Slurm finds only these.
#define TRNSLURM_EXPORT __attribute__((visibility("default")))

extern "C" {
// SPANK_PLUGIN() would give these internal linkage in C++ (namespace-scope const), and Slurm
// would then refuse the plugin: define them with external linkage ourselves.
TRNSLURM_EXPORT extern const char plugin_name[] = "trnslurm";
TRNSLURM_EXPORT extern const char plugin_type[] = "spank";
TRNSLURM_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
TRNSLURM_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

// Slurm's id for the batch script's own step (slurm.h's SLURM_BATCH_SCRIPT; including slurm.h
// would pull libslurm's API into the plugin).
constexpr std::uint32_t batch_script_step = 0xfffffffbU;

// Per-process state: each srun, sbatch and slurmstepd loads its own copy of the plugin.
struct State {
  trnslurm::EnvSettings settings;
  std::optional<std::string> remote_error;  // raised in task_init, never in init
};
State state;

// User text is never a format string.
void log_error(const std::string& msg) noexcept { slurm_error("trnslurm: %s", msg.c_str()); }
void log_info(const std::string& msg) noexcept { slurm_verbose("trnslurm: %s", msg.c_str()); }

template <class F>
int guarded(const char* hook, int on_exception, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    slurm_error("trnslurm: %s: internal error: %s", hook, e.what());
  } catch (...) {
    slurm_error("trnslurm: %s: internal error", hook);
  }
  return on_exception;
}

// Called at submission (remote == 0) and again on every node (remote == 1), possibly twice
// each: it only records, so calling it again is harmless.
int on_trn_env(int, const char* optarg, int remote) {
  return guarded("--trn-env", -1, [&] {
    auto parsed = trnslurm::parse_env_switch(optarg ? optarg : "");
    if (parsed) {
      state.settings.enabled = *parsed;
      return 0;
    }
    const auto msg = trnslurm::to_string(parsed.error());
    if (!remote) {
      log_error(msg);
      return -1;  // srun/sbatch refuse the submission
    }
    state.remote_error = msg;  // only reachable by smuggling the option through the environment
    return 0;
  });
}

std::array<spank_option, 1> options{{
    {const_cast<char*>("trn-env"), const_cast<char*>("on|off"),
     const_cast<char*>("trnslurm: set the Neuron/EFA environment of each task (default on)"), 1, 0,
     on_trn_env},
}};

template <class T>
bool get_item(spank_t sp, spank_item_t item, T& out) {
  return spank_get_item(sp, item, &out) == ESPANK_SUCCESS;
}

int task_init(spank_t sp) {
  if (state.remote_error) {
    log_error(*state.remote_error);
    return -1;
  }
  std::uint32_t step = 0;
  // The batch shell is not a training task: it gets nothing, its sruns do.
  if (get_item(sp, S_JOB_STEPID, step) && step == batch_script_step) return 0;

  trnslurm::TaskContext task;
  int local_id = 0;
  if (!get_item(sp, S_JOB_NODEID, task.node_id) || !get_item(sp, S_JOB_NNODES, task.nnodes) ||
      !get_item(sp, S_TASK_ID, local_id) || !get_item(sp, S_JOB_LOCAL_TASK_COUNT, task.local_count) ||
      !get_item(sp, S_TASK_GLOBAL_ID, task.global_id) ||
      !get_item(sp, S_JOB_TOTAL_TASK_COUNT, task.total_tasks)) {
    log_error("task_init: Slurm did not tell the task's position in the step");
    return -1;
  }
  task.local_id = static_cast<std::uint32_t>(local_id);

  for (const auto& var : trnslurm::task_environment(task, state.settings)) {
    // overwrite = 0: whatever the user set wins.
    const spank_err_t rc = spank_setenv(sp, var.name.c_str(), var.value.c_str(), 0);
    if (rc == ESPANK_ENV_EXISTS) {
      log_info(var.name + " already set by the user: left alone");
      continue;
    }
    if (rc != ESPANK_SUCCESS) {
      log_error("task_init: could not set " + var.name + ": " + spank_strerror(rc));
      return -1;
    }
    log_info(var.name + "=" + var.value + " (" + var.reason + ")");
  }
  return 0;
}

}  // namespace

extern "C" {

TRNSLURM_EXPORT int slurm_spank_init(spank_t sp, int, char**) {
  return guarded("init", 0, [&] {
    const spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0;
    for (auto& opt : options) {
      if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
        log_error(std::string("could not register --") + opt.name);
        // Refusing to load in srun/sbatch is safe; in slurmstepd it would drain the node.
        return ctx == S_CTX_REMOTE ? 0 : -1;
      }
    }
    return 0;
  });
}

TRNSLURM_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) {
  return guarded("task_init", -1, [&] { return task_init(sp); });
}

}  // extern "C"
