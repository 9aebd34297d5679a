// `trnslurm cancel [CHAIN]`: cancels every job of the chain and checks none remains.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  ChainOptions chain;
};

int run(const Options& o) {
  auto slurm = slurm_client();
  auto chain = load_chain(o.chain, slurm);
  if (!chain) {
    return exit_with(chain.error(), ErrorKind::input);
  }
  auto result = cancel_chain(
      *chain, slurm, [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); },
      std::chrono::seconds(30));
  if (!result) {
    return exit_with(result.error(), ErrorKind::slurm);
  }
  if (chain->manifest) {
    if (auto w = record_state(chain->manifest->run_dir, ManifestState::cancelled); !w) print_error(w.error());
  }
  if (!result->remaining.empty()) {
    return exit_with(
        Error{fmt::format("jobs {} are still in the queue after scancel", fmt::join(result->remaining, ",")),
              "chain " + chain->chain_id, "try again, or ask an administrator"},
        ErrorKind::slurm);
  }
  fmt::print("chain {}: cancelled; no job of it remains in the queue\n", chain->chain_id);
  return exit_ok;
}

}  // namespace

Command add_cancel(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("cancel", "Cancel every job of a chain");
  add_chain_options(*sub, opts->chain);
  sub->footer(
      "Exit code: 0 when no job of the chain remains pending or running, 1 otherwise.\n"
      "Examples:\n"
      "  trnslurm cancel                          # the newest chain\n"
      "  trnslurm cancel 20261122-005730-123-9f4f3270");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
