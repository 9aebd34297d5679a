#pragma once
// What status, watch, logs, cancel and list share: finding a chain, asking Slurm, printing.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/cache/precompile_decision.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/chain_progress.hpp"
#include "trnslurm/chain/chain_status.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/chain/run_dir.hpp"

namespace trnslurm::cli {

// Which chain: a chain id (default the newest), where run directories live.
struct ChainOptions {
  std::string chain;
  std::string runs_dir;  // "" = the recipe's run.runs_dir if ./trnslurm.toml has one, else ./runs
  std::string recipe = "trnslurm.toml";
};
void add_chain_options(CLI::App& app, ChainOptions& options, bool with_chain = true);
// Refuses an empty chain id given on the command line.
CLI::Validator given_chain_id();

std::filesystem::path resolve_runs_dir(const ChainOptions& options);

// The chain the options name (chain/chain_status.hpp's load_chain under resolve_runs_dir).
Result<LoadedChain> load_chain(const ChainOptions& options, SlurmClient& slurm);

// What status and watch share: loads the chain (exit 2 if it cannot be found), then refreshes
// its status and hands it to `show` until `show` returns false or the chain has ended. Returns
// the exit code of the last status: 0 succeeded, 1 failed, 3 still pending or running.
int follow_status(const ChainOptions& options,
                  const std::function<bool(const LoadedChain&, const ChainStatus&)>& show);
// The same for several chains (`ids`; none = the one the options name), refreshed together (one
// squeue call for all) until `show` returns false or none may change. The exit code is the worst
// verdict's: failed (1), held (4), still running or unknown (3), succeeded (0).
int follow_statuses(
    const ChainOptions& options, const std::vector<std::string>& ids,
    const std::function<bool(const std::vector<LoadedChain>&, const std::vector<ChainStatus>&)>& show);

// What status shows besides Slurm's answer, read from the run directory at each refresh: the
// compile cache's line (cache/precompile_decision.hpp's chain_cache_now) and the restarts log
// (chain/restarts.hpp). None without a run directory.
struct StatusRecords {
  std::optional<ChainCacheNow> cache;
  std::vector<RestartEvent> restarts;
};
StatusRecords read_status_records(const LoadedChain& chain);

// One line per stage plus a summary line, as `status` prints them; `colour` paints the states
// and the verdict (cli/colour.hpp decides when).
// With `progress`, the train stage's progress under the stage table (cli/progress_cli.hpp).
std::string format_status(const LoadedChain& chain, const ChainStatus& status, const StatusRecords& records,
                          bool colour = false, const std::optional<ProgressSummary>& progress = std::nullopt);
std::string status_json(const LoadedChain& chain, const ChainStatus& status, const StatusRecords& records,
                        const std::optional<ProgressSummary>& progress = std::nullopt);

// The train stage's progress for this refresh; a problem reading it is a warning, never fatal.
std::optional<ProgressSummary> refresh_progress(TrainProgress& tracker, const LoadedChain& chain,
                                                const ChainStatus& status);

// Sleeps: what the core's waits (`pause`) are given.
void pause_for(std::chrono::milliseconds d);

// How a SIGINT/SIGTERM/SIGHUP is seen: a flag set by the handler, checked between steps.
void install_interrupt_flag();
bool interrupted();

}  // namespace trnslurm::cli
