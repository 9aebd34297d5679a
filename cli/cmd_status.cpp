// `trnslurm status [CHAIN]`: one line per stage from one squeue call (docs/chain.md).
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "chain_cli.hpp"
#include "colour.hpp"
#include "commands.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  ChainOptions chain;
  bool json = false;
};

int run(const Options& o) {
  TrainProgress tracker;
  return follow_status(o.chain, [&](const LoadedChain& chain, const ChainStatus& status) {
    const auto progress = refresh_progress(tracker, chain, status);
    const auto records = read_status_records(chain);
    const auto text = o.json ? status_json(chain, status, records, progress)
                             : format_status(chain, status, records, colour_enabled(stdout), progress);
    fmt::print("{}", text);
    return false;
  });
}

}  // namespace

Command add_status(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("status", "Show the state of each stage of a chain");
  add_chain_options(*sub, opts->chain);
  sub->add_flag("--json", opts->json,
                "Print the status as JSON (stages, states, job ids, logs, verdict, train progress)");
  sub->footer(
      "Exit code: 0 the chain succeeded, 1 it failed (or was cancelled), 3 it is still pending or running\n"
      "(or how a stage Slurm has forgotten ended is unknown), 4 a stage is held and waits for a person.\n"
      "A stage waiting on a failed one is shown 'blocked: <stage> failed' and cancelled.\n"
      "Once train runs: step/total, loss and its trend, tokens/s, ETA, last checkpoint, restarts, a stall\n"
      "(docs/progress.md), read from the trainer's own progress lines.\n"
      "Examples:\n"
      "  trnslurm status                          # the newest chain of ./runs\n"
      "  trnslurm status 20261122-005730-123-9f4f3270 --runs-dir /fsx/runs\n"
      "  trnslurm status --json | jq -r .verdict");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
