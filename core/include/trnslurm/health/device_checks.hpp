#pragma once
// The Neuron devices of a node against what its instance type promises, and their
// uncorrectable-error counters (docs/health.md).

#include <filesystem>
#include <vector>

#include "trnslurm/health/finding.hpp"
#include "trnslurm/node/topology.hpp"

namespace trnslurm::health {

// Devices, cores per device and /dev nodes against the instance table: a device or core the type
// promises and the node lacks is a FAIL (check "neuron"); the type itself under "instances".
std::vector<Finding> check_devices(const Topology& topology, const NodeInstance& instance);

// neuron<N>/stats/hardware/{sram_ecc_uncorrected,mem_ecc_uncorrected,mem_ecc_repairable_uncorrected}
// under `root` (check "errors"): a count above zero is a FAIL; a missing or unreadable counter is
// unknown (a warn), never zero.
std::vector<Finding> check_error_counters(const std::filesystem::path& root, const Topology& topology);

}  // namespace trnslurm::health
