#pragma once
// A submitted chain as status, watch, logs and cancel see it: found in its run directory (or in
// Slurm alone when the directory is gone), its state refreshed from Slurm, and which stage's
// output `logs` shows. Policy here, printing in the CLI.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// A chain found in its run directory, or (with a chain id and no run directory) in Slurm alone.
struct LoadedChain {
  std::string chain_id;
  std::optional<Manifest> manifest;
  std::vector<StageRef> stages;
  // What refresh_status found left behind by an interrupted submit (or a failed rollback) and
  // cancelled; empty when there was nothing to look for.
  std::optional<Rollback> leftovers;
};

// `chain` ("" = the newest) under `runs_dir`; a dry run is refused (nothing to ask Slurm about).
// When the run directory is gone, a full chain id is looked up in Slurm by the jobs' names.
Result<LoadedChain> load_chain(const std::filesystem::path& runs_dir, std::string_view chain,
                               SlurmClient& slurm);

// Cancels every job of the chain still queued: its recorded ids and every job Slurm knows by the
// chain's job names and comments, which finds one an interrupted submit created but never
// recorded (that id is then recorded in the journal). Waits through `pause` up to `timeout`.
Result<Rollback> cancel_chain(LoadedChain& chain, SlurmClient& slurm,
                              const std::function<void(std::chrono::milliseconds)>& pause,
                              std::chrono::milliseconds timeout);

// Asks Slurm: first, when the submit of a chain died mid-way (still "submitting" with no submit
// holding its lock) or its rollback failed, cancels what it left (cancel_chain) and records
// "rolled-back" (or "rollback-failed" again); then cancels blocked stages (they would wait forever where
// kill_invalid_depend is off), and records each stage's last state in the manifest (best effort: a read-only
// run directory still gets its status) for when Slurm has forgotten the job. `pause` waits while cancelled
// leftovers leave the queue (5 s at most).
Result<ChainStatus> refresh_status(
    LoadedChain& chain, SlurmClient& slurm,
    const std::function<void(std::chrono::milliseconds)>& pause = [](std::chrono::milliseconds) {});
// The same for several chains at once (`watch` of many): one squeue call, at most one sacct and
// one scancel of blocked stages for all of them.
Result<std::vector<ChainStatus>> refresh_statuses(
    std::span<LoadedChain> chains, SlurmClient& slurm,
    const std::function<void(std::chrono::milliseconds)>& pause = [](std::chrono::milliseconds) {});

// The stage whose output `logs` shows: the one asked for by name, else the failed one, else the
// running one, else the last one submitted and started, else the first. An unknown name is an
// error that lists the chain's stages.
Result<std::size_t> stage_to_show(const ChainStatus& status, std::string_view requested);

}  // namespace trnslurm
