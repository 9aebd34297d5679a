// `trnslurm watch [CHAIN...]`: status, refreshed until the chains end (docs/chain.md).
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "chain_cli.hpp"
#include "colour.hpp"
#include "commands.hpp"
#include "number_options.hpp"
#include "trnslurm/chain/poll_backoff.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  ChainOptions chain;
  std::vector<std::string> chains;
  double interval = 2.0;
  double max_interval = 60.0;
};

// The options are checked finite and in range; PollBackoff keeps its floor whatever it is given.
std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(std::lround(seconds * 1000));
}

// What Slurm said, without what changes at every look (elapsed time): a change here is
// something happening, and brings the refreshes back to --interval.
std::string what_changed(const std::vector<ChainStatus>& statuses) {
  std::string out;
  for (const auto& st : statuses) {
    out += fmt::format("{};", to_string(st.verdict));
    for (const auto& s : st.stages)
      out += fmt::format("{}|{}|{}|{};", s.state, s.reason, s.exit_code, s.note);
  }
  return out;
}

int run(const Options& o) {
  install_interrupt_flag();
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  const bool colour = colour_enabled(stdout);
  std::string last;
  std::string last_seen;
  std::size_t last_lines = 0;
  PollBackoff backoff(to_ms(o.interval), to_ms(o.max_interval));
  // One tracker per chain: each train log is read by what it gained since the last refresh.
  std::vector<TrainProgress> trackers;
  return follow_statuses(
      o.chain, o.chains,
      [&](const std::vector<LoadedChain>& chains, const std::vector<ChainStatus>& statuses) {
        if (interrupted()) return false;  // exit 3: still running
        trackers.resize(chains.size());
        std::string text;
        for (std::size_t i = 0; i < chains.size(); ++i)
          text += format_status(chains[i], statuses[i], read_status_records(chains[i]), colour,
                                refresh_progress(trackers[i], chains[i], statuses[i]));
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
        if (std::none_of(statuses.begin(), statuses.end(), may_change)) return false;
        // Only what Slurm says resets the backoff: training progress alone (read from the log,
        // no RPC) is shown at the next refresh.
        auto seen = what_changed(statuses);
        const auto wait = backoff.next(seen != last_seen);
        last_seen = std::move(seen);
        const auto until = std::chrono::steady_clock::now() + wait;
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
  auto* sub = app.add_subcommand("watch", "Follow chains' status until they end");
  sub->add_option("chain", opts->chains, "Chain ids, followed together (default: the newest chain)")
      ->check(given_chain_id());
  add_chain_options(*sub, opts->chain, false);
  sub->add_option("--interval", opts->interval, "Seconds between refreshes while something changes")
      ->check(finite_range(0.1, 3600.0))
      ->capture_default_str();
  sub->add_option("--max-interval", opts->max_interval,
                  "Longest wait between refreshes: doubled from --interval while nothing changes")
      ->check(finite_range(0.1, 3600.0))
      ->capture_default_str();
  sub->footer(
      "On a terminal the status is redrawn in place; otherwise a new status is printed when it changes.\n"
      "Each refresh is one squeue call for all the chains; a job seen ended is not asked about again.\n"
      "Exit code: the worst of the chains' (1 failed, 4 held: watch stops, since nothing changes until a\n"
      "person acts, 3 interrupted while still running or unknown, 0 succeeded).\n"
      "Examples:\n"
      "  trnslurm watch\n"
      "  trnslurm watch --interval 30 20261122-005730-123-9f4f3270\n"
      "  trnslurm watch $(trnslurm list --json | jq -r '.[] | select(.verdict == \"running\") | .chain_id')");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
