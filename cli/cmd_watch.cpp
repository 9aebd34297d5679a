// `trnslurm watch [CHAIN]`: status, refreshed until the chain ends (docs/chain.md).
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "chain_cli.hpp"
#include "colour.hpp"
#include "commands.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  ChainOptions chain;
  double interval = 2.0;
};

int run(const Options& o) {
  install_interrupt_flag();
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  const bool colour = colour_enabled(stdout);
  std::string last;
  std::size_t last_lines = 0;
  TrainProgress tracker;  // the train log is read by what it gained since the last refresh
  return follow_status(o.chain, [&](const LoadedChain& chain, const ChainStatus& status) {
    const auto text = format_status(chain, status, colour, refresh_progress(tracker, chain, status));
    if (tty) {
      // Move up over the previous drawing and clear it.
      if (last_lines > 0) fmt::print("\x1b[{}A\x1b[J", last_lines);
      fmt::print("{}", text);
      last_lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    } else if (text != last) {
      fmt::print("{}", text);
    }
    (void)std::fflush(stdout);
    last = text;
    if (!may_change(status)) return false;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(o.interval * 1000));
    while (std::chrono::steady_clock::now() < until) {
      if (interrupted()) return false;  // exit 3: still running
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  });
}

}  // namespace

Command add_watch(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("watch", "Follow a chain's status until it ends");
  add_chain_options(*sub, opts->chain);
  sub->add_option("--interval", opts->interval, "Seconds between refreshes")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  sub->footer(
      "On a terminal the status is redrawn in place; otherwise a new status is printed when it changes.\n"
      "Exit code: as for status (0 succeeded, 1 failed, 3 interrupted while still running or unknown,\n"
      "4 held: watch stops, since nothing changes until a person acts).\n"
      "Examples:\n"
      "  trnslurm watch\n"
      "  trnslurm watch --interval 30 20261122-005730-123-9f4f3270");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
