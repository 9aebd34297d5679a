#include "trnslurm/util/child.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>

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

}  // namespace trnslurm
