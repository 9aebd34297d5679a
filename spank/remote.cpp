// The remote context (slurmstepd). user_init runs once per step in the step's parent process,
// as the user: it reads the node (topology under the admin's root, the slurmd's EFA answer),
// the rendezvous and the user's environment once for all the node's tasks, asks the core for
// every local task's environment, and sets what is the same for all of them (a setenv there
// reaches every task). task_init runs in each task's freshly forked process, as the user, just
// before exec: it only sets the variables decided for that task (cores, ranks).
extern "C" {
#include <slurm/slurm.h>
}

#include <dlfcn.h>
#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "slurm_lookup.hpp"
#include "state.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/util/printable.hpp"

namespace trnslurm::spank {

namespace {

// Slurm's id for the batch script's own step (SLURM_BATCH_SCRIPT).
constexpr std::uint32_t batch_script_step = 0xfffffffbU;

template <class T>
bool get_item(spank_t sp, spank_item_t item, T& out) {
  return spank_get_item(sp, item, &out) == ESPANK_SUCCESS;
}

// A variable of the job's environment. Values are usually short, but a step's node list on a
// large cluster or a user's variable can exceed any fixed buffer: grow it (up to 512 KiB, beyond
// the 128 KiB Linux allows one variable of an exec'd process) rather than take a long value for
// an unset one.
std::optional<std::string> job_getenv(spank_t sp, const char* name) {
  for (std::size_t size = 8192; size <= (std::size_t{1} << 20); size *= 8) {
    std::string buf(size, '\0');
    const spank_err_t rc = spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) {
      buf.resize(std::char_traits<char>::length(buf.c_str()));
      return buf;
    }
    if (rc != ESPANK_NOSPACE) return std::nullopt;
  }
  return std::nullopt;
}

bool is_batch_step(spank_t sp) {
  std::uint32_t step = 0;
  return get_item(sp, S_JOB_STEPID, step) && step == batch_script_step;
}

// To the task's own stderr (task_init runs in the task's process): what the user sees.
void to_task(const std::string& line) noexcept {
  (void)std::fprintf(stderr, "trnslurm: %s\n", printable(line, 4096).c_str());
}

// The batch step decides MASTER_ADDR for the job's first host once, and leaves it to the steps
// started from the batch shell (TRNSLURM_JOB_MASTER): no NodeAddr or DNS lookup on every node of
// every step. Nothing else reaches the batch shell.
void keep_job_master(spank_t sp, const State& st) {
  if (st.remote_error) return;
  const auto settings = merge(st.site, st.options);
  if (!settings.enabled || !settings.resolve_master) return;
  const auto nodelist = job_getenv(sp, "SLURM_JOB_NODELIST");
  const auto host = nodelist ? slurm_lookup::first_host(*nodelist) : std::nullopt;
  if (!host) return;
  const auto master = find_master(*host, settings, slurm_lookup::node_addr);
  spank_setenv(sp, std::string(job_master_variable).c_str(), format_job_master(master).c_str(), 1);
}

// Every task is forked from this process after user_init. What user_init allocated and freed
// (among it slurmstepd's 256 KiB buffer of each spank_setenv) stays in the heap, dirty, and every
// task that reuses it (slurmstepd's own setenv calls in the child do) copies each page on first
// write: handed back to the kernel here, those pages fault in the children as zero pages instead.
void trim_heap() noexcept {
  (void)malloc_trim(0);
}

}  // namespace

int remote_user_init(spank_t sp) {
  auto& st = state();
  if (is_batch_step(sp)) {
    // The batch shell is not a training task: it gets no task variable, its sruns do.
    st.batch_step = true;
    keep_job_master(sp, st);
    return 0;
  }
  if (st.remote_error) return 0;
  EnvInput in;
  in.settings = merge(st.site, st.options);
  if (!in.settings.enabled) {
    st.node = std::move(in);
    return 0;
  }
  NodeRequest request;
  request.site = st.site;
  request.settings = in.settings;
  auto& shape = request.task;
  if (!get_item(sp, S_JOB_NODEID, shape.node_id) || !get_item(sp, S_JOB_NNODES, shape.nnodes) ||
      !get_item(sp, S_JOB_LOCAL_TASK_COUNT, shape.local_count) ||
      !get_item(sp, S_JOB_TOTAL_TASK_COUNT, shape.total_tasks)) {
    st.remote_error = "Slurm did not tell the step's shape (node id, nodes, tasks)";
    return 0;
  }
  auto gathered =
      gather_node_inputs(request, {[sp](const std::string& name) { return job_getenv(sp, name.c_str()); },
                                   slurm_lookup::first_host, slurm_lookup::node_addr});
  if (!gathered) {
    st.remote_error = to_string(gathered.error());
    return 0;
  }
  in = std::move(*gathered);
  auto& t = in.task;
  // What trnslurm set for the step this one was started from is not the user's: removed, so that
  // this step's values replace it (spank_setenv below never overwrites), and the old mark with it.
  for (const auto& name : in.inherited) spank_unsetenv(sp, name.c_str());
  spank_unsetenv(sp, std::string(set_mark_variable).c_str());

  // Decide for every local task now, in the step's parent: a refusal (cores, LNC) depends only
  // on the node and is kept for task_init. What is the same for every task of the node is set
  // here, once (a setenv in user_init reaches every task); task_init only sets cores and ranks.
  st.task_vars.assign(t.local_count, {});
  for (std::uint32_t local = 0; local < t.local_count; ++local) {
    t.local_id = local;
    if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, local, &t.global_id) != ESPANK_SUCCESS) {
      st.remote_error = "Slurm did not tell the global id of local task " + std::to_string(local);
      return 0;
    }
    auto plan = task_environment(in);
    if (!plan) {
      st.remote_error = in.hostname + ": " + to_string(plan.error());
      return 0;
    }
    for (auto& var : plan->set) {
      if (var.per_task) {
        st.task_vars[local].push_back(std::move(var));
        continue;
      }
      if (local != 0) continue;
      // overwrite = 0: whatever the user set wins.
      const spank_err_t rc = spank_setenv(sp, var.name.c_str(), var.value.c_str(), 0);
      if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
        st.remote_error = "could not set " + var.name + ": " + spank_strerror(rc);
        return 0;
      }
    }
  }
  st.node = std::move(in);
  trim_heap();
  return 0;
}

int remote_task_init(spank_t sp) {
  auto& st = state();
  if (st.batch_step || is_batch_step(sp)) return 0;
  if (st.remote_error) {
    log_error(*st.remote_error);  // in the task's process: reaches the task's stderr too
    return -1;
  }
  if (!st.node) {
    log_error("task_init: user_init did not run");
    return -1;
  }
  const bool verbose = st.node->settings.verbose;
  if (!st.node->settings.enabled) {
    if (verbose) to_task("--trn-env=off: nothing set");
    return 0;
  }
  int local_id = 0;
  if (!get_item(sp, S_TASK_ID, local_id) || local_id < 0 ||
      static_cast<std::size_t>(local_id) >= st.task_vars.size()) {
    log_error("task_init: Slurm did not tell the task's position in the step");
    return -1;
  }
  for (const auto& var : st.task_vars[static_cast<std::size_t>(local_id)]) {
    const spank_err_t rc = spank_setenv(sp, var.name.c_str(), var.value.c_str(), 0);
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
      log_error("task_init: could not set " + var.name + ": " + spank_strerror(rc));
      return -1;
    }
  }
  if (verbose) {
    // Only here is the whole decision computed again in the task, to print it.
    EnvInput in = *st.node;
    in.task.local_id = static_cast<std::uint32_t>(local_id);
    get_item(sp, S_TASK_GLOBAL_ID, in.task.global_id);
    const auto plan = task_environment(in);
    if (!plan) return 0;  // cannot happen: user_init decided the same input
    const std::string who = in.hostname + " task " + std::to_string(in.task.global_id);
    for (const auto& var : plan->set)
      to_task(fmt::format("{}: {}={} ({})", who, var.name, var.value, var.reason));
    for (const auto& var : plan->kept)
      to_task(fmt::format("{}: {}={} ({})", who, var.name, var.value, var.reason));
    for (const auto& note : plan->notes) to_task(fmt::format("{}: {}", who, note));
  }
  return 0;
}

}  // namespace trnslurm::spank
