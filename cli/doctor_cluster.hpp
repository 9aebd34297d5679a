#pragma once
// `trnslurm doctor --cluster`: the node checks on many nodes at once, as one short Slurm job.

#include <optional>
#include <string>

#include "node_health.hpp"

namespace trnslurm::cli {

struct ClusterDoctorOptions {
  std::optional<std::string> partition;
  std::optional<unsigned> nodes;
  std::optional<std::string> nodelist;
  bool json = false;
  NodeHealthOptions health;
};

// Runs the per-node step on the nodes asked for, prints one row per node, and returns 0 only
// when every node passes (warnings pass), 1 when one fails, 2 on bad options.
int run_cluster_doctor(const ClusterDoctorOptions& options);

}  // namespace trnslurm::cli
