#pragma once
// A forked child waited for with a time limit, for the one process trnslurm starts that is not a
// program: the plugin's EFA probe in slurmd, a function run in a fork (node/efa.hpp). Programs
// are started by util/process.hpp. Polled rather than waited for with a timer, so that no
// signal handler of the daemon's is touched, and killed when it overstays.

#include <sys/types.h>

#include <chrono>
#include <optional>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The child's wait status, or nullopt when it did not end within `limit` (it is then killed and
// reaped). An error when it cannot be waited for (ECHILD: the caller reaped it itself).
Result<std::optional<int>> wait_bounded(pid_t pid, std::chrono::milliseconds limit);

}  // namespace trnslurm
