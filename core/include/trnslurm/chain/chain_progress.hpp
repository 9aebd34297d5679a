#pragma once
// The train stage's progress as status and watch show it (docs/progress.md): its Slurm log read
// by what it gained since the last look (the reading state is kept in
// <run dir>/logs/.train-progress.json), with the figures of the run's plan.json, the newest
// completed checkpoint and the restarts log.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/chain_status.hpp"
#include "trnslurm/progress/progress.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The trainers' checkpoint layouts: a step's directory and the file written last, whose presence
// makes the step complete. NxD: step_<N>/done; TorchTitan (torch.distributed.checkpoint):
// step-<N>/.metadata. One directory holds one trainer's checkpoints, so both are looked for.
struct CheckpointLayout {
  std::string_view prefix;
  std::string_view marker;
};
inline constexpr std::array<CheckpointLayout, 2> checkpoint_layouts{
    {{"step_", "done"}, {"step-", ".metadata"}}};
// The layout a directory name is a step of, or nullptr.
const CheckpointLayout* checkpoint_layout_of(std::string_view name);

// The newest complete step under a checkpoint directory (the train wrapper's rule).
struct CheckpointMark {
  std::uint64_t step = 0;
  std::int64_t time = 0;       // the marker's mtime, Unix seconds
  std::filesystem::path path;  // the step's directory
};
std::optional<CheckpointMark> newest_completed_checkpoint(const std::filesystem::path& dir);

// What a run's plan.json gives the progress figures (and `plan --from-run` the measured rate).
struct RunFigures {
  std::uint64_t total_steps = 0;
  std::uint64_t gbs = 0;
  std::uint64_t seq_len = 0;
  std::uint32_t nodes = 0;
  std::uint64_t world_size = 0;  // 0 in a plan.json of before it was recorded
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
