// The exported SPANK hooks, and nothing else: each one is a guarded dispatch on the context into
// options.cpp (local/allocator/remote option handling), slurmd.cpp (the once-per-node EFA probe),
// remote.cpp (slurmstepd: user_init prepares the node, task_init sets each task's environment)
// and drain.cpp (slurmstepd, as root: the end of a pre-flight step). Every decision is made by
// the core (trnslurm/node/task_env.hpp, trnslurm/health/drain.hpp).
//
// Where a failure lands matters (docs/plugin.md, "Failure"): plugstack and option errors refuse
// the submission in the local/allocator context; in the remote context init, init_post_opt and
// user_init never fail, and a problem seen there is raised in task_init.
#include <string>
#include <vector>

#include "state.hpp"

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

namespace ts = trnslurm::spank;

extern "C" {

TRNSLURM_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  return ts::guarded("init", 0, [&] {
    const spank_context_t ctx = spank_context();
    std::vector<std::string> args(av, av + ac);
    auto site = trnslurm::parse_plugstack_args(args);
    if (!site) {
      const auto msg = trnslurm::to_string(site.error());
      switch (ctx) {
        case S_CTX_LOCAL:
        case S_CTX_ALLOCATOR:
          ts::log_error(msg);
          return -1;  // every srun/sbatch refuses until the admin fixes plugstack.conf
        case S_CTX_REMOTE:
          ts::state().remote_error = msg;  // raised in task_init: the node is not drained
          return 0;
        default:
          ts::log_error(msg);  // slurmd, prolog: log, do nothing else
          return 0;
      }
    }
    ts::state().site = std::move(*site);
    switch (ctx) {
      case S_CTX_LOCAL:
      case S_CTX_ALLOCATOR:
      case S_CTX_REMOTE:
        return ts::register_options(sp, ctx);
      case S_CTX_SLURMD:
        return ts::slurmd_init();
      default:
        return 0;
    }
  });
}

TRNSLURM_EXPORT int slurm_spank_user_init(spank_t sp, int, char**) {
  // Never fails: a failure here drains the node. Problems are raised in task_init.
  return ts::guarded("user_init", 0, [&] { return ts::remote_user_init(sp); });
}

TRNSLURM_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) {
  return ts::guarded("task_init", -1, [&] { return ts::remote_task_init(sp); });
}

TRNSLURM_EXPORT int slurm_spank_task_exit(spank_t sp, int, char**) {
  // Never fails: Slurm only logs it. The drain of a broken node happens here (drain.cpp).
  if (spank_context() != S_CTX_REMOTE) return 0;
  return ts::guarded("task_exit", 0, [&] { return ts::remote_task_exit(sp); });
}

}  // extern "C"
