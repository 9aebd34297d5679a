#pragma once
// What one copy of the plugin remembers between hooks. srun, sbatch, slurmd and every
// slurmstepd load their own copy, so this is per process; a task's task_init runs in a child
// forked after user_init, so it sees what user_init prepared.
extern "C" {
#include <slurm/spank.h>
}

#include <optional>
#include <string>
#include <vector>

#include "trnslurm/node/task_env.hpp"

namespace trnslurm::spank {

struct State {
  SiteSettings site;
  UserOptions options;
  // An error seen in the remote context, where init/user_init must not fail (that drains the
  // node): raised in task_init, which fails the job and leaves the node in service.
  std::optional<std::string> remote_error;
  bool batch_step = false;
  // Prepared once per step in user_init: the node's facts, shared by its tasks.
  std::optional<EnvInput> node;
  // The per-task variables of each local task, decided in user_init too: task_init runs in a
  // freshly forked child where every page first touched costs a fault, so it only looks up and
  // sets (docs/plugin.md, "Hardening and cost").
  std::vector<std::vector<EnvVar>> task_vars;
  // The root re-check of a --trn-preflight step runs once, at its first task's end.
  bool drain_checked = false;
};

State& state();

// Logging: every message starts with the plugin's name; user text is never a format string, and
// is made printable() (no control characters, at most 1 KiB): it may hold a user's value.
void log_error(const std::string& msg) noexcept;
void log_info(const std::string& msg) noexcept;
void log_verbose(const std::string& msg) noexcept;

// Runs a hook's body; no exception ever crosses into Slurm.
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

// The hooks per context (plugin.cpp dispatches to them).
int register_options(spank_t sp, spank_context_t ctx);
int slurmd_init();
int remote_user_init(spank_t sp);
int remote_task_init(spank_t sp);
int remote_task_exit(spank_t sp);

}  // namespace trnslurm::spank
