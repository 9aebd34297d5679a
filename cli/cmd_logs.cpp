// `trnslurm logs [CHAIN] [--stage S] [-f]`: a stage's Slurm output file from the run directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"
#include "trnslurm/chain/poll_backoff.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {
namespace {

// Copies what the log holds from `offset` on to stdout; returns the new offset. Only a regular
// file, opened without blocking: a FIFO or a device in the log's place (the run directory is the
// user's) is refused, not waited on or copied forever.
Result<off_t> copy_from(const std::filesystem::path& path, off_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return offset;  // not written yet
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!regular) {
    ::close(fd);
    return fail(fmt::format("the stage's log is {}, not a regular file: not read", file_kind(st.st_mode)),
                path.string(), "remove it: Slurm writes the log there");
  }
  std::array<char, 65536> buf{};
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    (void)std::fwrite(buf.data(), 1, static_cast<std::size_t>(n), stdout);
    offset += n;
  }
  ::close(fd);
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
  // How the stage stands, from Slurm or, once Slurm has forgotten it, from the job's own record.
  fmt::print(stderr, "==> {} (stage {}, job {}, {}{}) <==\n", path.string(), stage.name, *stage.job_id,
             stage.state,
             stage.exit_code.empty() || is_active(stage.phase) ? "" : " exit " + stage.exit_code);
  auto copied = copy_from(path, 0);
  if (!copied) {
    print_error(copied.error());
    return exit_usage;
  }
  off_t offset = *copied;
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
        (void)copy_from(path, offset);
        return exit_ok;
      }
      next_check = std::chrono::steady_clock::now() + check_backoff.next(phase != last_phase);
      last_phase = phase;
    }
    const auto before = offset;
    copied = copy_from(path, offset);
    if (!copied) {
      print_error(copied.error());
      return exit_usage;
    }
    offset = *copied;
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
