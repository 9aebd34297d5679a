// `trnslurm preflight` (hidden): the train stage's pre-flight, run by its wrapper in the batch
// script at every start (docs/health.md). Checks every node of the job in one step; when nodes
// fail, records the exclusion in the restarts log, requeues the job and adds the nodes to its
// excluded nodes (Slurm accepts ExcNodeList only once the job is pending again), and exits 3;
// exits 1 when max_exclusions is used up, 0 when every node passes. Its srun is marked
// --trn-preflight so that the plugin, as root, drains a broken node where the site allows it
// (health/drain.hpp); this side only reports what Slurm then shows.
#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <utility>

#include "commands.hpp"
#include "doctor_cluster.hpp"
#include "output.hpp"
#include "process.hpp"
#include "site_config.hpp"
#include "trnslurm/chain/requeue.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::cli {

namespace {

constexpr int exit_excluded = 3;  // the wrapper waits for the requeue

std::string env_or(const char* name, std::string fallback = {}) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

// The plugin's --trn-preflight for the pre-flight's srun, as srun reads a SPANK option from its
// environment (spank(7)): a cluster without the plugin ignores it, where the flag would fail.
constexpr const char* preflight_mark = "SLURM_SPANK__SLURM_SPANK_OPTION_trnslurm_trn_preflight";

// Whether the site's plugstack.conf lets the plugin drain (nullopt: the job cannot read it).
std::optional<bool> site_allows_drain() {
  const auto cfg = load_site_config(std::nullopt);
  if (!cfg.plugstack_found) return std::nullopt;
  return cfg.line && cfg.site && cfg.site->preflight_drain;
}

// The requeue ends every process of the job with SIGTERM; this one keeps going long enough to
// set the excluded nodes. Caught rather than ignored: an ignored signal stays ignored across
// exec, so scontrol would inherit it; a caught one is reset to its default there.
extern "C" void outlive_requeue(int) {}
void survive_requeue() {
  struct sigaction sa {};
  sa.sa_handler = outlive_requeue;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
}

int run() {
  const auto run_dir = env_or("TRNSLURM_RUN_DIR");
  const auto job = env_or("SLURM_JOB_ID");
  if (run_dir.empty() || job.empty()) {
    return exit_with(Error{"not in a train stage's job", "trnslurm preflight",
                           "the train wrapper runs it; use `trnslurm doctor --cluster` by hand"},
                     ErrorKind::usage);
  }
  ClusterDoctorOptions o;
  o.nodes = parse_number<unsigned>(env_or("SLURM_JOB_NUM_NODES", "1"));
  if (const auto checks = env_or("TRNSLURM_PREFLIGHT_CHECKS"); !checks.empty()) o.health.checks = checks;
  if (const auto dir = env_or("TRNSLURM_CHECKPOINT_DIR"); !dir.empty()) o.health.checkpoint_dir = dir;
  o.health.checkpoint_bytes =
      parse_number<std::uint64_t>(env_or("TRNSLURM_CHECKPOINT_BYTES", "0")).value_or(0);
  // A recipe may opt out of draining (never opt in: that is the site's plugstack.conf).
  const bool recipe_drain = env_or("TRNSLURM_PREFLIGHT_DRAIN", "1") != "0";
  if (recipe_drain) (void)setenv(preflight_mark, "", 1);
  const auto rows = check_cluster(o);
  if (!rows) {
    return exit_with(rows.error(), ErrorKind::slurm);
  }
  PreflightJob pf;
  pf.run_dir = run_dir;
  pf.job = parse_number<std::uint64_t>(job).value_or(0);
  pf.restart = parse_number<std::uint32_t>(env_or("SLURM_RESTART_COUNT", "0")).value_or(0);
  pf.time = static_cast<std::int64_t>(std::time(nullptr));
  pf.max_exclusions = parse_number<std::uint32_t>(env_or("TRNSLURM_MAX_EXCLUSIONS", "2")).value_or(2);
  pf.recipe_drain = recipe_drain;
  pf.site_drain = site_allows_drain();
  pf.pause = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  pf.before_requeue = [&job](const PreflightOutcome& so_far) {
    const auto& event = so_far.event;
    fmt::print(stderr, "trnslurm: pre-flight: {}\n", event.drain);
    fmt::print(stderr, "trnslurm: pre-flight failed: {}; excluding {} and requeueing job {}\n", event.why,
               fmt::join(event.nodes, ","), job);
    if (!so_far.own_exclusions_unknown.empty())
      print_warning(
          fmt::format("job {}'s own excluded nodes could not be read ({}): excluding those of "
                      "the restarts log and this pre-flight",
                      job, so_far.own_exclusions_unknown));
    survive_requeue();
  };
  auto slurm = slurm_client();
  const auto done = settle_preflight(*rows, pf, slurm);
  if (!done) {
    return exit_with(done.error(), ErrorKind::slurm);
  }
  switch (done->kind) {
    case PreflightOutcome::Kind::passed:
      fmt::print(stderr, "trnslurm: pre-flight: {} nodes passed\n", done->nodes_checked);
      return exit_ok;
    case PreflightOutcome::Kind::gave_up:
      fmt::print(stderr, "trnslurm: pre-flight: {}\n", done->event.drain);
      fmt::print(stderr, "trnslurm: pre-flight failed: {}; max_exclusions = {} used up: giving up\n",
                 done->event.why, done->event.max_exclusions.value_or(0));
      return exit_failure;
    case PreflightOutcome::Kind::requeued:
      if (!done->excluded_set)
        print_warning(fmt::format("job {} requeued, but its excluded nodes could not be set to {}", job,
                                  done->excluded));
      return exit_excluded;
  }
  return exit_internal;
}

}  // namespace

Command add_preflight(CLI::App& app) {
  auto* sub = app.add_subcommand("preflight", "The train stage's pre-flight (run by its wrapper)");
  sub->group("");  // hidden: the train wrapper runs it
  return {sub, [] { return run(); }};
}

}  // namespace trnslurm::cli
