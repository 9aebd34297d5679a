// The slurmd context: at daemon start, as root, probe libfabric once for this node and leave
// the answer in a root-owned file that every step reads (docs/plugin.md, "EFA"). Loading
// libfabric costs about 0.3 s; paid here once per slurmd start, never per srun or per task, and
// in a child process: libfabric never loads into slurmd itself.
#include "state.hpp"
#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/node_inputs.hpp"

namespace trnslurm::spank {

namespace {
// slurmd waits this long for the probe at start; a provider that hangs costs no more.
constexpr std::chrono::milliseconds efa_probe_limit{10'000};
}  // namespace

int slurmd_init() {
  const auto dir = expand_node_pattern(state().site.state_dir, node_name());
  if (!dir) {
    log_error(to_string(dir.error()));
    return 0;  // never stop slurmd over this: steps see "no probe result" and leave FI_* alone
  }
  if (state().site.defaults.efa == EfaMode::off) {
    log_info("EFA detection off in plugstack.conf: no probe");
    return 0;
  }
  const auto probe = probe_efa_in_child(*dir, efa_probe_limit);
  if (!probe) {
    log_error("EFA probe result not saved: " + to_string(probe.error()));
    return 0;
  }
  log_info("EFA " + std::string(to_string(probe->state)) + " (" + probe->detail + "), saved in " + *dir +
           "/efa");
  return 0;
}

}  // namespace trnslurm::spank
