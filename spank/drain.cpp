// The end of a pre-flight step, in slurmstepd, as root: where plugstack.conf says
// preflight_drain=yes and the step was marked --trn-preflight, re-run the checks whose inputs
// the user cannot change and drain this node when they fail (docs/plugin.md, "Draining").
//
// task_exit runs in slurmstepd's own process once it has taken its privileges back (after
// user_init and the tasks' fork), when it collects a task's exit status, and before it tells
// srun that the task ended: the drain is done by the time `trnslurm preflight` reads the node.
// Nothing the user controls is read here: the site's root= tree and instances= file only, never
// the job's environment, working directory, checkpoint or cache directories. scontrol runs with
// the daemon's SLURM_CONF, not the job's.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "state.hpp"
#include "trnslurm/health/drain.hpp"
#include "trnslurm/health/node_checks.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/util/process.hpp"

namespace trnslurm::spank {

namespace {

namespace fs = std::filesystem;

// scontrol waits for slurmctld at most MessageTimeout (10 s by default, slurm.conf(5)); the
// step's end waits no longer than that for it.
constexpr std::chrono::milliseconds drain_limit{15'000};

// The scontrol of the Slurm this slurmstepd belongs to: <prefix>/sbin/slurmstepd beside
// <prefix>/bin/scontrol (Debian's /usr, ParallelCluster's /opt/slurm), else Debian's.
std::string scontrol_path() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = exe.parent_path().parent_path() / "bin" / "scontrol";
    if (access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "/usr/bin/scontrol";
}

// The daemon's own environment, not the job's: where slurm.conf is, and a fixed PATH.
std::vector<std::string> scontrol_env() {
  std::vector<std::string> env{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  if (const char* conf = std::getenv("SLURM_CONF"); conf && *conf)
    env.push_back(std::string("SLURM_CONF=") + conf);
  return env;
}

}  // namespace

int remote_task_exit(spank_t) {
  auto& st = state();
  if (st.drain_checked || st.batch_step || !st.options.preflight) return 0;
  st.drain_checked = true;
  const auto node = node_name();
  if (!st.site.preflight_drain) {
    log_verbose(node + ": pre-flight step: draining not allowed by plugstack.conf (preflight_drain=yes)");
    return 0;
  }
  if (geteuid() != 0) {
    log_error(node + ": pre-flight step: cannot drain, slurmstepd does not run as root");
    return 0;
  }
  health::NodeCheckInputs in;
  const auto root = expand_node_pattern(st.site.root, node);
  const auto instances = expand_node_pattern(st.site.instances, node);
  if (!root || !instances) {
    log_error(node + ": pre-flight re-check: " + to_string(root ? instances.error() : root.error()));
    return 0;
  }
  in.root = *root;
  in.site_instances = *instances;
  in.checks.assign(health::drain_checks.begin(), health::drain_checks.end());
  const auto findings = health::run_node_checks(in);
  if (!findings) {
    log_error(node + ": pre-flight re-check: " + to_string(findings.error()));
    return 0;
  }
  const auto decision = health::decide_drain(st.site.preflight_drain, st.options.preflight, *findings);
  if (!decision.drain) {
    log_info(node + ": pre-flight step: not drained: " + decision.why_not);
    return 0;
  }
  const auto ran = run_process(health::drain_command(scontrol_path(), node, decision.reason),
                               RunOptions{.limit = drain_limit, .env = scontrol_env()});
  if (!ran)
    log_error(node + ": could not drain: " + to_string(ran.error()));
  else if (ran->timed_out)
    log_error(node + ": could not drain: scontrol did not answer within 15 s");
  else if (ran->exit_code != 0)
    log_error(node + ": could not drain: scontrol exited " + std::to_string(ran->exit_code) + ": " +
              ran->err + ran->out);
  else
    log_info(node + ": drained: " + decision.reason);
  return 0;
}

}  // namespace trnslurm::spank
