#pragma once
// Training progress as status and watch show it: what the trainer's log says so far (read a
// little more on each refresh, kept between commands as JSON), and the figures drawn from it with
// the plan's (percent, tokens per second, ETA, a stalled trainer). Policy here; printing in cli/.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/progress/log_lines.hpp"
#include "trnslurm/progress/progress_line.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// One step line.
struct ProgressPoint {
  std::uint64_t step = 0;
  double loss = 0;
  std::optional<double> learning_rate;
  std::optional<double> seq_per_second;
  std::optional<double> tokens_per_second_per_device;  // TorchTitan's tps
};

// What a train log has said so far. Only the last few step lines are kept: enough for the trend
// and the rate, and a log of days costs no more than a log of minutes.
struct LogProgress {
  static constexpr std::size_t kept = 32;
  std::uint64_t offset = 0;  // read up to here
  std::uint64_t file_id = 0;
  bool from_tail = false;              // the first read started near the end (lines before unread)
  std::vector<ProgressPoint> recent;   // the newest `kept` step lines of the current attempt
  std::uint64_t step_lines = 0;        // step lines read
  std::uint32_t steps_back = 0;        // a step lower than the one before: the trainer started again
  std::optional<std::uint64_t> epoch;  // from the newest epoch or step line
  bool finished = false;               // the trainer's end line came after its last step line
  std::int64_t last_step_seen = 0;     // Unix seconds: the log's mtime when its newest step line was read
  std::uint64_t long_lines = 0;
};

// Adds one parsed line; `seen_at` is when it was known to be written (the log's mtime).
void add_line(LogProgress& p, const ProgressLine& line, std::int64_t seen_at);

// Reads what `log` gained since `p` was last brought up to date. A log never read is read from its
// end backwards: its last 64 KiB, then four times more each time until a step line is found or
// `tail_bytes` is reached. A log replaced (another inode) or truncated starts over.
inline constexpr std::uint64_t default_tail_bytes = 64 << 20;
Result<LogRead> update_progress(LogProgress& p, const std::filesystem::path& log,
                                const ProgressParser& parser, bool final,
                                std::uint64_t tail_bytes = default_tail_bytes);

nlohmann::json to_json(const LogProgress& p);
// Anything unreadable (another version, a torn file) gives nullopt: the log is read again.
std::optional<LogProgress> log_progress_from_json(const nlohmann::json& j);

// What the summary needs besides the log.
struct ProgressInputs {
  std::uint64_t total_steps = 0;
  std::uint64_t gbs = 0;         // sequences per optimizer step
  std::uint64_t seq_len = 0;     // tokens per sequence
  std::uint32_t nodes = 0;       // of the train stage
  std::uint64_t world_size = 0;  // the train stage's devices: a per-device rate x this is the job's
  std::optional<double> estimate_tokens_per_second_per_node;  // the recipe's [estimate]
  std::optional<std::uint64_t> checkpoint_step;               // the newest completed checkpoint
  std::optional<std::int64_t> checkpoint_time;                // when it completed, Unix seconds
  std::uint32_t restarts = 0;                                 // from the restarts log
  bool running = false;                                       // the train stage runs now
  bool ended = false;                                         // the train stage is over (any way)
  std::int64_t now = 0;
  double stall_factor = 10;          // stalled: no step line for this many times the usual gap...
  double stall_floor_seconds = 300;  // ...and at least this long (a checkpoint save is no stall)
};

enum class LossTrend { unknown, falling, flat, rising };
std::string_view to_string(LossTrend trend);

struct ProgressSummary {
  std::optional<std::uint64_t> step;
  std::uint64_t total_steps = 0;
  std::optional<double> percent;
  std::optional<std::uint64_t> epoch;
  std::optional<double> loss;
  LossTrend loss_trend = LossTrend::unknown;
  std::optional<double> loss_change;  // relative, newer half of the kept lines against the older
  std::optional<double> learning_rate;
  std::optional<double> tokens_per_second;
  std::optional<double> tokens_per_second_per_node;
  std::optional<double> seconds_per_step;
  std::optional<double> estimate_tokens_per_second_per_node;
  std::optional<double> measured_vs_estimate;  // measured per node / estimate
  std::optional<std::int64_t> eta_seconds;
  std::optional<std::uint64_t> checkpoint_step;
  std::optional<std::int64_t> checkpoint_age_seconds;
  std::uint32_t restarts = 0;
  bool stalled = false;
  std::optional<std::int64_t> seconds_since_step;
  bool finished = false;  // the trainer said so, or the stage ended at the planned total
  bool ended = false;     // the train stage is over (finished or not)
};

ProgressSummary summarize(const LogProgress& p, const ProgressInputs& in);

// Every step line of a log, for a picture (trnslurm report): read whole, in chunks; past
// `max_points` lines every other one is dropped and then only every 2^k-th kept, so memory stays
// bounded for a log of any length while the curve keeps its shape. A new attempt starts where the
// step goes back (a restart resumed from its checkpoint).
// The job's tokens per second at one point: sequences per second x seq_len, or tokens per second
// of one device x the world size.
std::optional<double> job_tokens_per_second(const ProgressPoint& p, std::uint64_t seq_len,
                                            std::uint64_t world_size);
struct SeriesPoint {
  std::uint32_t attempt = 0;
  ProgressPoint point;
};
struct ProgressSeries {
  std::vector<SeriesPoint> points;
  std::uint64_t step_lines = 0;
  std::uint32_t attempts = 0;  // 0 when no step line was read
  bool finished = false;
  std::uint64_t long_lines = 0;
};
Result<ProgressSeries> read_series(const std::filesystem::path& log, const ProgressParser& parser,
                                   std::size_t max_points = 20000);
nlohmann::json to_json(const ProgressSummary& s);

}  // namespace trnslurm
