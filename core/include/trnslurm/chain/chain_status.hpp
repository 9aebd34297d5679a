#pragma once
// A submitted chain as status, watch, logs and cancel see it: found in its run directory (or in
// Slurm alone when the directory is gone), its state refreshed from Slurm, and which stage's
// output `logs` shows. Policy here, printing in the CLI.

#include <cstddef>
#include <filesystem>
#include <optional>
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
};

// `chain` ("" = the newest) under `runs_dir`; a dry run is refused (nothing to ask Slurm about).
// When the run directory is gone, a full chain id is looked up in Slurm by the jobs' names.
Result<LoadedChain> load_chain(const std::filesystem::path& runs_dir, std::string_view chain,
                               SlurmClient& slurm);

// Asks Slurm, cancels blocked stages (they would wait forever where kill_invalid_depend is
// off), and records each stage's last state in the manifest (best effort: a read-only run
// directory still gets its status) for when Slurm has forgotten the job.
Result<ChainStatus> refresh_status(LoadedChain& chain, SlurmClient& slurm);

// The stage whose output `logs` shows: the one asked for by name, else the failed one, else the
// running one, else the last one submitted and started, else the first. An unknown name is an
// error that lists the chain's stages.
Result<std::size_t> stage_to_show(const ChainStatus& status, std::string_view requested);

}  // namespace trnslurm
