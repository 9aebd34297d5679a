#pragma once
// The train stage's progress as status and watch show it (docs/progress.md): its Slurm log read
// by what it gained since the last look (the reading state is kept in
// <run dir>/logs/.train-progress.json), with the figures of the run's plan.json, the newest
// completed checkpoint and the restarts log.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/chain_status.hpp"
#include "trnslurm/progress/progress.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The newest step_<N>/done under a checkpoint directory (NxD's layout; the train wrapper's rule).
struct CheckpointMark {
  std::uint64_t step = 0;
  std::int64_t time = 0;  // the done file's mtime, Unix seconds
};
std::optional<CheckpointMark> newest_completed_checkpoint(const std::filesystem::path& dir);

// What a run's plan.json gives the progress figures (and `plan --from-run` the measured rate).
struct RunFigures {
  std::uint64_t total_steps = 0;
  std::uint64_t gbs = 0;
  std::uint64_t seq_len = 0;
  std::uint32_t nodes = 0;
  std::optional<double> estimate_tokens_per_second_per_node;
  std::filesystem::path checkpoint_dir;
};
Result<RunFigures> read_run_figures(const std::filesystem::path& run_dir);

// What a run measured: tokens per second per node from the newest progress lines of its train
// log (no Slurm needed), for `plan --from-run`. An error when the log has no throughput yet.
struct MeasuredRate {
  double tokens_per_second_per_node = 0;
  std::uint64_t step = 0;  // the step the rate was read at
  RunFigures figures;
};
Result<MeasuredRate> measured_rate(const std::filesystem::path& run_dir);

std::filesystem::path progress_state_path(const std::filesystem::path& run_dir);

// Follows one chain's train log across refreshes (watch keeps one; status makes one per call).
class TrainProgress {
 public:
  // nullopt when there is nothing to show: no run directory, no train stage, not started yet.
  Result<std::optional<ProgressSummary>> refresh(const LoadedChain& chain, const ChainStatus& status,
                                                 std::int64_t now);

 private:
  std::optional<LogProgress> state_;
};

}  // namespace trnslurm
