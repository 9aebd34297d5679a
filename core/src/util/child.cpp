#include "trnslurm/util/child.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "trnslurm/util/fd.hpp"

namespace trnslurm {

Result<std::optional<int>> wait_bounded(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    usleep(20'000);
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return std::optional<int>();
  }
  if (done < 0)
    return fail(fmt::format("cannot wait for process {}: {}", pid, std::strerror(errno)), "child");
  return std::optional<int>(status);
}

Result<ChildRun> run_bounded(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                             std::chrono::milliseconds limit) {
  if (argv.empty() || !argv.front().starts_with('/')) return fail("no absolute program to run", "child");
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::array<int, 2> fds{-1, -1};
  if (pipe2(fds.data(), O_CLOEXEC) != 0)
    return fail(fmt::format("cannot make a pipe: {}", std::strerror(errno)), argv.front());
  const Fd out(fds[0]);
  Fd in(fds[1]);
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = fork();
  if (pid < 0) {
    if (null >= 0) close(null);
    return fail(fmt::format("cannot fork: {}", std::strerror(errno)), argv.front());
  }
  if (pid == 0) {
    if (null >= 0) dup2(null, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  if (null >= 0) close(null);
  in.reset();
  const auto waited = wait_bounded(pid, limit);
  if (!waited) return std::unexpected(waited.error());
  ChildRun run;
  // The child has ended: what it wrote waits in the pipe (far less than its buffer).
  (void)fcntl(out.get(), F_SETFL, O_NONBLOCK);
  std::array<char, 4096> buf{};
  const auto got = read(out.get(), buf.data(), buf.size());
  if (got > 0) run.output.assign(buf.data(), static_cast<std::size_t>(got));
  if (!*waited) {
    run.timed_out = true;
    return run;
  }
  const int status = **waited;
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

}  // namespace trnslurm
