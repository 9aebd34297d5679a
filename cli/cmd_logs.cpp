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
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"
#include "trnslurm/chain/poll_backoff.hpp"
#include "trnslurm/util/fd.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {
namespace {

// What one call of copy_from did.
struct Copied {
  off_t offset = 0;
  bool more = false;    // the log held more than this call's share: read again without waiting
  int write_error = 0;  // stdout did not take it (errno): a full disk, a closed descriptor
};

// No share: everything the log holds when it is opened.
constexpr off_t whole_log = std::numeric_limits<off_t>::max();
// What `logs -f` copies between two looks at SIGINT/SIGTERM and Slurm: a log that grows as fast as
// it is read (or faster) never keeps it in one read. Nothing is buffered beyond 64 KiB, lines or
// none.
constexpr off_t follow_share = off_t{16} << 20;

// Copies the log from `offset` to stdout, up to the size it had when opened and at most `share`
// bytes. Only a regular file, opened without blocking: a FIFO or a device in the log's place (the
// run directory is the user's) is refused, not waited on or copied forever. A log shorter than
// `offset` was truncated or replaced: that is said, and it is copied from its start.
Result<Copied> copy_from(const std::filesystem::path& path, off_t offset, off_t share) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return Copied{offset, false};  // not written yet
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(fmt::format("the stage's log is {}, not a regular file: not read", file_kind(st.st_mode)),
                path.string(), "remove it: Slurm writes the log there");
  }
  if (st.st_size < offset) {
    print_warning(
        fmt::format("{}: the log shrank from {} to {} bytes (truncated or replaced): printing it "
                    "from its start",
                    path.string(), offset, st.st_size));
    offset = 0;
  }
  const off_t end = st.st_size - offset > share ? offset + share : st.st_size;
  std::array<char, 65536> buf{};
  while (offset < end) {
    const auto want = static_cast<std::size_t>(std::min<off_t>(end - offset, buf.size()));
    const ssize_t n = ::pread(fd.get(), buf.data(), want, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (std::fwrite(buf.data(), 1, static_cast<std::size_t>(n), stdout) != static_cast<std::size_t>(n))
      return Copied{offset, false, errno};
    offset += n;
  }
  if (std::fflush(stdout) != 0) return Copied{offset, false, errno};
  return Copied{offset, end < st.st_size, 0};
}

// The exit code of a copy that went wrong, said; nothing for one that went right.
std::optional<int> copy_failed(const Result<Copied>& copied, const std::filesystem::path& path) {
  if (!copied) return exit_with(copied.error(), ErrorKind::input);
  if (copied->write_error == 0) return std::nullopt;
  return exit_with(
      Error{fmt::format("cannot write the log to stdout: {}", std::strerror(copied->write_error)),
            path.string(), "check where stdout goes (a full disk, a closed descriptor)"},
      ErrorKind::local);
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
    return exit_with(chain.error(), ErrorKind::input);
  }
  if (!chain->manifest) {
    return exit_with(Error{"the run directory of this chain is gone, and with it the logs",
                           "chain " + chain->chain_id, "'trnslurm status' still works from Slurm alone"},
                     ErrorKind::input);
  }
  auto status = refresh_status(*chain, slurm, pause_for);
  if (!status) {
    return exit_with(status.error(), ErrorKind::slurm);
  }
  const auto pick = stage_to_show(*status, o.stage);
  if (!pick) {
    return exit_with(pick.error(), ErrorKind::input);
  }
  const auto& stage = status->stages[*pick];
  if (!stage.job_id) {
    return exit_with(
        Error{fmt::format("stage {} was not submitted", stage.name), "chain " + chain->chain_id, ""},
        ErrorKind::refused);
  }
  const auto path = output_path(chain->manifest->run_dir, stage.name, *stage.job_id);
  // How the stage stands, from Slurm or, once Slurm has forgotten it, from the job's own record.
  fmt::print(stderr, "==> {} (stage {}, job {}, {}{}) <==\n", path.string(), stage.name, *stage.job_id,
             stage.state,
             stage.exit_code.empty() || is_active(stage.phase) ? "" : " exit " + stage.exit_code);
  if (!o.follow) {
    return copy_failed(copy_from(path, 0, whole_log), path).value_or(exit_ok);
  }
  install_interrupt_flag();
  // Slurm is asked whether the stage still runs once a second at first, less often while its
  // phase stays the same (up to once a minute); the file is read every 0.2 s while it grows,
  // less often (up to every 2 s) while it does not, and at once while a share was not enough.
  PollBackoff check_backoff(std::chrono::seconds(1), std::chrono::seconds(60));
  PollBackoff read_backoff(std::chrono::milliseconds(200), std::chrono::seconds(2));
  auto last_phase = stage.phase;
  auto next_check = std::chrono::steady_clock::now() + check_backoff.next(true);
  off_t offset = 0;
  for (;;) {
    if (interrupted()) return exit_ok;
    if (std::chrono::steady_clock::now() >= next_check) {
      auto now = query_chain(chain->stages, slurm);
      if (!now && interrupted()) return exit_ok;  // Ctrl-C killed squeue too: no answer from Slurm
      if (!now) {
        return exit_with(now.error(), ErrorKind::slurm);
      }
      const auto phase = now->stages[*pick].phase;
      if (!is_active(phase) || phase == JobPhase::held) {
        // The stage's last words; a log still growing after its job ended is copied as it is now.
        return copy_failed(copy_from(path, offset, whole_log), path).value_or(exit_ok);
      }
      next_check = std::chrono::steady_clock::now() + check_backoff.next(phase != last_phase);
      last_phase = phase;
    }
    const auto copied = copy_from(path, offset, follow_share);
    if (const auto code = copy_failed(copied, path)) return *code;
    const bool grew = copied->offset != offset;
    offset = copied->offset;
    const auto wait = read_backoff.next(grew);
    if (copied->more) continue;
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
      "submitted, Slurm could not be asked or stdout could not take the log, 2 no such chain or stage,\n"
      "or its log is not a regular file. -f ends on SIGINT or SIGTERM.\n"
      "Examples:\n"
      "  trnslurm logs                            # the failed stage, else the running one\n"
      "  trnslurm logs -f --stage train\n"
      "  trnslurm logs 20261122-005730-123-9f4f3270 --stage precompile | less");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
