// `trnslurm logs [CHAIN] [--stage S] [-f]`: a stage's Slurm output file from the run directory.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"
#include "trnslurm/chain/poll_backoff.hpp"

namespace trnslurm::cli {
namespace {

// Copies what `in` holds from `offset` on to stdout; returns the new offset.
std::streamoff copy_from(const std::filesystem::path& path, std::streamoff offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return offset;
  in.seekg(offset);
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    (void)std::fwrite(buf, 1, static_cast<std::size_t>(in.gcount()), stdout);
    offset += in.gcount();
  }
  (void)std::fflush(stdout);
  return offset;
}

struct Options {
  ChainOptions chain;
  std::string stage;
  bool follow = false;
};

int run(const Options& o) {
  auto slurm = slurm_client();
  auto chain = load_chain(o.chain, slurm);
  if (!chain) {
    print_error(chain.error());
    return exit_usage;
  }
  if (!chain->manifest) {
    print_error(Error{"the run directory of this chain is gone, and with it the logs",
                      "chain " + chain->chain_id, "'trnslurm status' still works from Slurm alone"});
    return exit_usage;
  }
  auto status = refresh_status(*chain, slurm, pause_for);
  if (!status) {
    print_error(status.error());
    return exit_failure;
  }
  const auto pick = stage_to_show(*status, o.stage);
  if (!pick) {
    print_error(pick.error());
    return exit_usage;
  }
  const auto& stage = status->stages[*pick];
  if (!stage.job_id) {
    print_error(Error{fmt::format("stage {} was not submitted", stage.name), "chain " + chain->chain_id, ""});
    return exit_failure;
  }
  const auto path = output_path(chain->manifest->run_dir, stage.name, *stage.job_id);
  fmt::print(stderr, "==> {} (stage {}, job {}) <==\n", path.string(), stage.name, *stage.job_id);
  std::streamoff offset = copy_from(path, 0);
  if (!o.follow) return exit_ok;
  install_interrupt_flag();
  // Slurm is asked whether the stage still runs once a second at first, less often while its
  // phase stays the same (up to once a minute); the file is read every 0.2 s while it grows,
  // less often (up to every 2 s) while it does not.
  PollBackoff check_backoff(std::chrono::seconds(1), std::chrono::seconds(60));
  PollBackoff read_backoff(std::chrono::milliseconds(200), std::chrono::seconds(2));
  auto last_phase = stage.phase;
  auto next_check = std::chrono::steady_clock::now() + check_backoff.next(true);
  for (;;) {
    if (interrupted()) return exit_ok;
    if (std::chrono::steady_clock::now() >= next_check) {
      auto now = query_chain(chain->stages, slurm);
      if (!now) {
        print_error(now.error());
        return exit_failure;
      }
      const auto phase = now->stages[*pick].phase;
      if (!is_active(phase) || phase == JobPhase::held) {
        copy_from(path, offset);
        return exit_ok;
      }
      next_check = std::chrono::steady_clock::now() + check_backoff.next(phase != last_phase);
      last_phase = phase;
    }
    const auto before = offset;
    offset = copy_from(path, offset);
    const auto wait = read_backoff.next(offset != before);
    const auto until = std::min(std::chrono::steady_clock::now() + wait, next_check);
    while (std::chrono::steady_clock::now() < until && !interrupted())
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

Command add_logs(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("logs", "Print a stage's output");
  add_chain_options(*sub, opts->chain);
  sub->add_option("--stage", opts->stage,
                  "Stage (default: the failed stage, else the running one, else the last submitted)");
  sub->add_flag("-f,--follow", opts->follow, "Keep printing while the stage runs");
  sub->footer(
      "The file's name goes to stderr, its content to stdout. Exit code: 0 printed, 1 the stage was not\n"
      "submitted or Slurm could not be asked, 2 no such chain or stage.\n"
      "Examples:\n"
      "  trnslurm logs                            # the failed stage, else the running one\n"
      "  trnslurm logs -f --stage train\n"
      "  trnslurm logs 20261122-005730-123-9f4f3270 --stage precompile | less");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
