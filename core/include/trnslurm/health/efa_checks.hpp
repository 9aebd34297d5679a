#pragma once
// The EFA devices a node shows against its instance type, and whether libfabric offers the efa
// provider the Neuron collectives use between nodes (docs/health.md).

#include <filesystem>
#include <optional>
#include <vector>

#include "trnslurm/health/finding.hpp"
#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/topology.hpp"

namespace trnslurm::health {

// The EFA devices under <root>/sys/class/infiniband: entries whose device/driver links to a
// driver named "efa" (Linux's sysfs-class-infiniband ABI). Nullopt when the directory is missing.
std::optional<std::size_t> count_efa_devices(const std::filesystem::path& root);

// Check "efa": fewer EFA devices than the type has (instance table, efa_devices) is a FAIL.
std::vector<Finding> check_efa_devices(const std::filesystem::path& root, const NodeInstance& instance);

// Check "libfabric": on a type with EFA devices, libfabric without an efa provider is a FAIL, no
// answer a warn. `probe` is the slurmd's saved answer or one made now.
std::vector<Finding> check_libfabric(const std::optional<EfaProbe>& probe, const NodeInstance& instance);

}  // namespace trnslurm::health
