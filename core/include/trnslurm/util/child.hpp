#pragma once
// A child process waited for with a time limit, for code that runs inside Slurm's daemons (the
// plugin's EFA probe in slurmd, its drain in slurmstepd): polled rather than waited for with a
// timer, so that no signal handler of the daemon's is touched, and killed when it overstays.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The child's wait status, or nullopt when it did not end within `limit` (it is then killed and
// reaped). An error when it cannot be waited for (ECHILD: the caller reaped it itself).
Result<std::optional<int>> wait_bounded(pid_t pid, std::chrono::milliseconds limit);

struct ChildRun {
  int exit_code = -1;  // -1 when killed by a signal or by the time limit
  std::string output;  // its stdout and stderr together, at most 4 KiB
  bool timed_out = false;
};

// Runs argv[0] (an absolute path: no PATH search) with exactly `env` as its environment, stdin
// from /dev/null, no shell between. An error when it cannot be started.
Result<ChildRun> run_bounded(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                             std::chrono::milliseconds limit);

}  // namespace trnslurm
