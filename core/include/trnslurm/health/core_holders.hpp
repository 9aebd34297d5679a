#pragma once
// NeuronCores held by a process that is not the job's: the runtime reserves a device's cores
// for the process that opened /dev/neuron<N> until it ends, so a stale trainer left behind makes
// the next job's runtime fail to start.

#include <filesystem>
#include <vector>

#include <sys/types.h>

#include "trnslurm/health/finding.hpp"

namespace trnslurm::health {

// Every <root>/proc/<pid>/fd/<n> that links to /dev/neuron<N>, for a pid not in `own` (check
// "cores"): each such process is a FAIL naming the devices, the pid and its comm. A <root>/proc
// that cannot be read, or descriptors of other users that cannot be (not root), is a warn.
std::vector<Finding> check_core_holders(const std::filesystem::path& root, const std::vector<pid_t>& own);

}  // namespace trnslurm::health
