#pragma once
// What the train stage's pre-flight does once its nodes' rows are in (docs/health.md): nothing
// when every node passed; otherwise the event recorded in the restarts log, and the job requeued
// without the failing nodes, or given up once max_exclusions is used up.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/health/cluster_report.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The nodes of `failed` that Slurm shows drained (or draining) by trnslurm's plugin; a node
// scontrol cannot show is not drained.
std::vector<std::string> drained_nodes(const std::vector<std::string>& failed, SlurmClient& slurm);

struct PreflightOutcome;

// The job and its surroundings, as the train wrapper's environment gives them.
struct PreflightJob {
  std::filesystem::path run_dir;  // holds logs/train-restarts.jsonl
  JobId job = 0;
  std::uint32_t restart = 0;  // SLURM_RESTART_COUNT
  std::int64_t time = 0;      // Unix seconds, for the event
  std::uint32_t max_exclusions = 2;
  bool recipe_drain = true;        // the recipe lets the plugin drain
  std::optional<bool> site_drain;  // plugstack.conf's preflight_drain; nullopt: the job cannot read it
  // Waits between the attempts to set the excluded nodes (a sleep; the tests count the calls).
  std::function<void(std::chrono::milliseconds)> pause;
  // Called once, with the outcome so far (event recorded, `excluded` known), just before the
  // requeue: it sends the job's processes SIGTERM, which the caller must outlive to set the
  // excluded nodes, and after which the job's output may be another run's.
  std::function<void(const PreflightOutcome&)> before_requeue;
  int exclude_attempts = 50;  // 100 ms apart: Slurm takes ExcNodeList only once the job pends again
};

struct PreflightOutcome {
  enum class Kind { passed, requeued, gave_up };
  Kind kind = Kind::passed;
  std::size_t nodes_checked = 0;
  RestartEvent event;         // requeued, gave_up: as the restarts log got it
  std::string excluded;       // requeued: the ExcNodeList asked for
  bool excluded_set = false;  // requeued: false when Slurm never took it (the job runs anywhere)
  // requeued: why the job's own excluded nodes are not in `excluded` (scontrol could not show the
  // job; the restarts log's earlier exclusions are)
  std::string own_exclusions_unknown;
};

// The pre-flight's decision carried out with `slurm`. Errors: the job is gone (nothing is
// recorded or requeued), the event cannot be appended to the restarts log (it counts the
// exclusions against max_exclusions; without it the job could requeue itself for ever), or the
// requeue is refused (the event is then recorded, the job fails).
Result<PreflightOutcome> settle_preflight(const std::vector<health::NodeRow>& rows, const PreflightJob& job,
                                          SlurmClient& slurm);

}  // namespace trnslurm
