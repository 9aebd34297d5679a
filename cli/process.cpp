// The one place that starts subprocesses: posix_spawn, never through a shell.
//
// posix_spawn rather than fork: glibc starts the child with clone(CLONE_VM | CLONE_VFORK), so
// neither the child nor trnslurm copies trnslurm's page tables or faults its pages back in
// afterwards. `submit` starts four sbatch per chain and is measured against bare sbatch calls
// (bench/chain, docs/scale.md).
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "trnslurm/util/fd.hpp"

extern char** environ;

namespace trnslurm::cli {

namespace {

// posix_spawn's attributes and file actions, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_{};
  posix_spawn_file_actions_t actions_{};
};

// Reads the child's stdout and stderr to their ends, both at once: a child that fills one pipe
// while we wait on the other would otherwise block for ever.
void drain(const Fd& out_fd, const Fd& err_fd, std::string& out, std::string& err) {
  std::array<pollfd, 2> fds{pollfd{out_fd.get(), POLLIN, 0}, pollfd{err_fd.get(), POLLIN, 0}};
  std::array<std::string*, 2> into{&out, &err};
  std::array<char, 65536> buf{};
  int open_count = 2;
  while (open_count > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;  // a Ctrl-C: the child finishes, its output is still read
      return;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buf.data(), buf.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_count;
        continue;
      }
      into[i]->append(buf.data(), static_cast<std::size_t>(got));
    }
  }
}

}  // namespace

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, RunOptions options) {
  if (argv.empty()) return fail("no command to run", "run_process");
  const std::string& program = argv.front();
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  std::array<int, 2> out_fds{-1, -1};
  std::array<int, 2> err_fds{-1, -1};
  if (pipe2(out_fds.data(), O_CLOEXEC) != 0)
    return fail(fmt::format("cannot run {}: no pipe: {}", program, std::strerror(errno)), program);
  const Fd out_read(out_fds[0]);
  Fd out_write(out_fds[1]);
  if (pipe2(err_fds.data(), O_CLOEXEC) != 0)
    return fail(fmt::format("cannot run {}: no pipe: {}", program, std::strerror(errno)), program);
  const Fd err_read(err_fds[0]);
  Fd err_write(err_fds[1]);
  SpawnSetup setup;
  // stdin from /dev/null, stdout and stderr to our pipes (dup2 clears their close-on-exec), every
  // other descriptor closed: the child inherits nothing of ours, not even the submit lock.
  posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(setup.actions(), out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(setup.actions(), err_write.get(), STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(setup.actions(), STDERR_FILENO + 1);
  // Every signal at its default and none blocked, whatever this process does with them (the
  // pre-flight outlives its job's SIGTERM): an ignored or blocked signal would be the child's too.
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(setup.attr(), &all);
  posix_spawnattr_setsigmask(setup.attr(), &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (options.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(setup.attr(), 0);
  }
  posix_spawnattr_setflags(setup.attr(), flags);
  pid_t pid = -1;
  // A path is run as given (report's /usr/bin/python3); a bare name is looked up in PATH.
  const int rc =
      program.find('/') != std::string::npos
          ? posix_spawn(&pid, program.c_str(), setup.actions(), setup.attr(), args.data(), environ)
          : posix_spawnp(&pid, program.c_str(), setup.actions(), setup.attr(), args.data(), environ);
  if (rc == ENOENT && program.find('/') == std::string::npos)
    return fail(fmt::format("'{}' not found in PATH", program), "PATH",
                "install the Slurm client commands, or run on a node where they are available");
  if (rc != 0) return fail(fmt::format("cannot run {}: {}", program, std::strerror(rc)), program);
  // Only the child holds the write ends now: their end of file is the child's.
  out_write.reset();
  err_write.reset();

  ProcessOutput result;
  drain(out_read, err_read, result.out, result.err);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return fail(fmt::format("cannot wait for {}: {}", program, std::strerror(errno)), program);
  }
  // As a shell reports it: a signal's death is 128 + its number.
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace trnslurm::cli
