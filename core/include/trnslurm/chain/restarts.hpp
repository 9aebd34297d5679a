#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// One line of <run dir>/logs/train-restarts.jsonl, written by the train stage's wrapper
// (docs/resilience.md): "restart" when a requeued job starts again, "requeue" when the job
// requeues itself, "gave-up" when max_restarts (or max_exclusions) is used up, "exclude" when
// nodes failed the pre-flight and the job requeued itself without them (docs/health.md).
struct RestartEvent {
  std::string event;          // restart, requeue, gave-up, exclude
  std::string cause;          // time-limit, node-failure, preempted, slurm-requeue, preflight
  std::uint32_t restart = 0;  // SLURM_RESTART_COUNT when written
  std::uint64_t job = 0;
  std::int64_t time = 0;                        // Unix seconds
  std::optional<std::uint64_t> resumed_from;    // restart: newest completed checkpoint step
  std::optional<std::uint64_t> checkpoint;      // requeue, gave-up: newest checkpoint at that time
  std::optional<std::uint32_t> max_restarts;    // gave-up
  std::vector<std::string> nodes;               // exclude, gave-up (preflight): the failing nodes
  std::string why;                              // exclude: each node's reason, "; " between them
  std::optional<std::uint32_t> max_exclusions;  // gave-up (preflight)
  std::string drain;  // exclude, gave-up (preflight): the nodes drained, or why not (health/drain.hpp)
};

std::filesystem::path restarts_path(const std::filesystem::path& run_dir);

// Every well-formed line; a line it cannot read (a crash mid-write) is skipped. No file: none.
std::vector<RestartEvent> parse_restarts(std::string_view jsonl);
std::vector<RestartEvent> read_restarts(const std::filesystem::path& run_dir);
// The last "gave-up" event, the one status explains the chain's end with; nullopt when none.
std::optional<RestartEvent> last_gave_up(const std::vector<RestartEvent>& events);

// The event as JSON: one line of that file (dumped, no newline) is what parse_restarts reads
// back. The wrapper writes its own lines in the same shape; `trnslurm preflight` writes with this,
// and `status --json` lists the events with it.
nlohmann::json to_json(const RestartEvent& event);

// Appends the event to the run directory's restarts log (one line, one write).
Result<void> append_restart(const std::filesystem::path& run_dir, const RestartEvent& event);

// "time-limit" -> "time limit (signal, checkpoint, requeue)" and so on, for people.
std::string describe_cause(std::string_view cause);

}  // namespace trnslurm
