// The one process runner, on Boost.Process (1.74, the default fork-and-exec launcher: not the
// vfork launcher, boostorg/process#314). Boost starts the child and reports an exec failure
// through its own close-on-exec pipe; what the child must not inherit from us is reset in
// `CleanChild`; the output is read here, both pipes at once, while the child runs.
//
// No Boost.Filesystem: Boost.Process's search_path is its one part that needs that compiled
// library, and the plugin, which links this file, loads no C++ shared library (docs/plugin.md,
// "Cost"). The PATH lookup is execvp's, written out below.
#include "trnslurm/util/process.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>
#include <thread>

namespace trnslurm {

namespace {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

// Runs in the child between fork and exec, so only async-signal-safe calls (the parent may be
// slurmstepd, with threads). Every signal back to its default and none blocked, whatever the
// parent does with them (the pre-flight ignores SIGTERM; slurmstepd blocks some): an ignored or
// blocked signal would otherwise be the program's too. Every descriptor above stderr closes at
// exec (the submit lock, slurmstepd's sockets); close-on-exec rather than closed now, so that
// Boost's own pipe still reports a failed exec.
struct CleanChild : bp::extend::handler {
  bool own_group = false;

  template <typename Executor>
  void on_exec_setup(Executor& /*exec*/) const {
    if (own_group) setpgid(0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);  // glibc's own: EINVAL
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (close_range(STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      // Kernels before 5.11: one descriptor at a time, up to the soft limit (capped).
      rlimit lim{};
      const int top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536
                          ? static_cast<int>(lim.rlim_cur)
                          : 65536;
      for (int fd = STDERR_FILENO + 1; fd < top; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
};

// execvp's search: each directory of PATH in turn (an empty entry is the current directory),
// the first executable regular file there. No PATH at all: execvp's default.
std::optional<std::string> find_in_path(const std::string& name, std::string_view path) {
  while (true) {
    const auto colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    std::string candidate = dir.empty() ? name : fmt::format("{}/{}", dir, name);
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    path.remove_prefix(colon + 1);
  }
}

std::string_view path_variable(const RunOptions& options) {
  if (options.env) {
    for (const auto& entry : *options.env) {
      if (entry.starts_with("PATH=")) return std::string_view(entry).substr(5);
    }
    return "/bin:/usr/bin";
  }
  const char* path = std::getenv("PATH");
  return path ? path : "/bin:/usr/bin";
}

// Reads the child's stdout and stderr until both end or `deadline` passes (false then): both at
// once, since a child that fills one pipe while we wait on the other would block for ever.
bool read_both(int out_fd, int err_fd, std::string& out, std::string& err,
               std::optional<Clock::time_point> deadline) {
  std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
  std::array<std::string*, 2> into{&out, &err};
  std::array<char, 65536> buf{};
  int open_count = 2;
  while (open_count > 0) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    const int ready = poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;  // a Ctrl-C: the child finishes, its output is still read
      return true;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buf.data(), buf.size());
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_count;
        continue;
      }
      into[i]->append(buf.data(), static_cast<std::size_t>(got));
    }
  }
  return true;
}

// Waits for the child's exit until `deadline` (false then), polling: a timed wait would need
// SIGCHLD, and the daemons we run in own their signal handling (Boost's wait_for blocks SIGCHLD
// and waits for it). The output has ended, so the exit is normally a moment away.
bool exited_by(bp::child& child, Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(50);
  while (true) {
    std::error_code ec;
    if (!child.running(ec)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20'000));
  }
}

bp::environment environment_of(const std::vector<std::string>& entries) {
  bp::environment env;
  for (const auto& entry : entries) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) return fail("no command to run", "run_process");
  const std::string& name = argv.front();
  std::string program = name;
  if (name.find('/') == std::string::npos) {
    auto found = find_in_path(name, path_variable(options));
    if (!found)
      return fail(fmt::format("'{}' not found in PATH", name), "PATH",
                  "install it, or run where its directory is in PATH");
    program = std::move(*found);
  }
  const bool limited = options.limit.count() > 0;
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  CleanChild clean;
  clean.own_group = options.own_process_group || limited;

  ProcessOutput result;
  try {
    bp::pipe out_pipe;
    bp::pipe err_pipe;
    // Our ends close at any exec but the child's (Boost's dup2 onto 1 and 2 clears the flag), so
    // another child started meanwhile does not hold them open.
    for (const int fd :
         {out_pipe.native_source(), out_pipe.native_sink(), err_pipe.native_source(), err_pipe.native_sink()})
      fcntl(fd, F_SETFD, FD_CLOEXEC);
    std::error_code ec;
    const auto start = [&](auto&&... environment) {
      return bp::child(bp::exe = program, bp::args = args, (bp::std_in < bp::null), (bp::std_out > out_pipe),
                       (bp::std_err > err_pipe), environment..., clean, ec);
    };
    bp::child child = options.env ? start(environment_of(*options.env)) : start();
    if (ec) return fail(fmt::format("cannot run {}: {}", program, ec.message()), name);

    const auto deadline = Clock::now() + options.limit;
    bool in_time = read_both(out_pipe.native_source(), err_pipe.native_source(), result.out, result.err,
                             limited ? std::optional(deadline) : std::nullopt);
    if (in_time && limited) in_time = exited_by(child, deadline);
    if (!in_time) {
      killpg(child.id(), SIGKILL);  // the group of its own it was started in
      result.timed_out = true;
    }
    child.wait(ec);
    if (ec) return fail(fmt::format("cannot wait for {}: {}", program, ec.message()), name);
    const int status = child.native_exit_code();
    if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
      result.exit_code = 128 + result.signal;
    } else {
      result.exit_code = WEXITSTATUS(status);
    }
  } catch (const std::exception& e) {  // Boost's pipe and environment report failures by throwing
    return fail(fmt::format("cannot run {}: {}", program, e.what()), name);
  }
  return result;
}

}  // namespace trnslurm
