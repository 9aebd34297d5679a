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
#include <fstream>
#include <utility>

#include "commands.hpp"
#include "doctor_cluster.hpp"
#include "output.hpp"
#include "process.hpp"
#include "site_config.hpp"
#include "trnslurm/chain/preflight.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/health/drain.hpp"
#include "trnslurm/util/parse_number.hpp"
#include "trnslurm/util/scontrol_record.hpp"

namespace trnslurm::cli {

namespace {

constexpr int exit_excluded = 3;  // the wrapper waits for the requeue

std::string env_or(const char* name, std::string fallback = {}) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

// The job's ExcNodeList as `scontrol show job -o` prints it ("" for none).
std::string excluded_now(const std::string& job) {
  const auto shown = run_process({"scontrol", "show", "job", "-o", job});
  if (!shown) return {};
  const auto value = scontrol_field(shown->out, "ExcNodeList");
  return value == "(null)" ? std::string() : std::string(value);
}

// The plugin's --trn-preflight for the pre-flight's srun, as srun reads a SPANK option from its
// environment (spank(7)): a cluster without the plugin ignores it, where the flag would fail.
constexpr const char* preflight_mark = "SLURM_SPANK__SLURM_SPANK_OPTION_trnslurm_trn_preflight";

// What the job can tell of the failing nodes' draining once the pre-flight step has ended (the
// plugin drains before the step's tasks are reported ended).
std::string drain_report(bool recipe_allows, const std::vector<std::string>& failed) {
  std::optional<bool> site_allows;
  if (const auto cfg = load_site_config(std::nullopt); cfg.plugstack_found)
    site_allows =
        cfg.line && cfg.site ? std::optional<bool>(cfg.site->preflight_drain) : std::optional<bool>(false);
  std::vector<std::string> drained;
  for (const auto& node : failed) {
    const auto shown = run_process({"scontrol", "show", "node", "-o", node});
    if (shown && shown->exit_code == 0 && health::drained_by_trnslurm(shown->out)) drained.push_back(node);
  }
  return health::drain_note(recipe_allows, site_allows, failed, drained);
}

int run() {
  const auto run_dir = env_or("TRNSLURM_RUN_DIR");
  const auto job = env_or("SLURM_JOB_ID");
  if (run_dir.empty() || job.empty()) {
    print_error(Error{"not in a train stage's job", "trnslurm preflight",
                      "the train wrapper runs it; use `trnslurm doctor --cluster` by hand"});
    return exit_usage;
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
    print_error(rows.error());
    return exit_failure;
  }
  auto event =
      preflight_event(*rows, read_restarts(run_dir),
                      parse_number<std::uint32_t>(env_or("TRNSLURM_MAX_EXCLUSIONS", "2")).value_or(2));
  if (!event) {
    fmt::print(stderr, "trnslurm: pre-flight: {} nodes passed\n", rows->size());
    return exit_ok;
  }
  event->restart = parse_number<std::uint32_t>(env_or("SLURM_RESTART_COUNT", "0")).value_or(0);
  event->job = parse_number<std::uint64_t>(job).value_or(0);
  event->time = static_cast<std::int64_t>(std::time(nullptr));
  event->drain = drain_report(recipe_drain, event->nodes);
  std::ofstream(restarts_path(run_dir), std::ios::app) << to_json(*event).dump() << '\n';
  const auto& failed = event->nodes;
  const auto& why = event->why;
  fmt::print(stderr, "trnslurm: pre-flight: {}\n", event->drain);
  if (event->event == "gave-up") {
    fmt::print(stderr, "trnslurm: pre-flight failed: {}; max_exclusions = {} used up: giving up\n", why,
               event->max_exclusions.value_or(0));
    return exit_failure;
  }
  fmt::print(stderr, "trnslurm: pre-flight failed: {}; excluding {} and requeueing job {}\n", why,
             fmt::join(failed, ","), job);
  auto list = excluded_now(job);
  for (const auto& n : failed) list += (list.empty() ? "" : ",") + n;
  // The requeue ends every process of the job with SIGTERM; this one keeps going long enough to
  // set the excluded nodes, which Slurm accepts only once the job is pending again.
  (void)std::signal(SIGTERM, SIG_IGN);
  const auto requeued = run_process({"scontrol", "requeue", job});
  if (!requeued || requeued->exit_code != 0) {
    print_error(
        Error{"scontrol requeue failed", "pre-flight", requeued ? requeued->err : requeued.error().what});
    return exit_failure;
  }
  for (int attempt = 0; attempt < 50; ++attempt) {
    const auto updated = run_process({"scontrol", "update", "JobId=" + job, "ExcNodeList=" + list});
    if (updated && updated->exit_code == 0) return exit_excluded;
    timespec pause{0, 100'000'000};
    nanosleep(&pause, nullptr);
  }
  print_warning(fmt::format("job {} requeued, but its excluded nodes could not be set to {}", job, list));
  return exit_excluded;
}

}  // namespace

Command add_preflight(CLI::App& app) {
  auto* sub = app.add_subcommand("preflight", "The train stage's pre-flight (run by its wrapper)");
  sub->group("");  // hidden: the train wrapper runs it
  return {sub, [] { return run(); }};
}

}  // namespace trnslurm::cli
