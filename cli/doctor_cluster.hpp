#pragma once
// `trnslurm doctor --cluster`: the node checks on many nodes at once, as one short Slurm job.

#include <optional>
#include <string>
#include <vector>

#include "node_health.hpp"
#include "trnslurm/health/cluster_report.hpp"

namespace trnslurm::cli {

struct ClusterDoctorOptions {
  std::optional<std::string> partition;
  std::optional<unsigned> nodes;
  std::optional<std::string> nodelist;
  bool json = false;
  NodeHealthOptions health;
};

// Runs the per-node step (`health-node`) on the nodes asked for, or on every node of the job it
// runs in, as one srun; one row per node. An error for bad options or when no node answered
// (where: "pre-flight").
Result<std::vector<health::NodeRow>> check_cluster(const ClusterDoctorOptions& options);

// Runs the per-node step on the nodes asked for, prints one row per node, and returns 0 only
// when every node passes (warnings pass), 1 when one fails, 2 on bad options.
int run_cluster_doctor(const ClusterDoctorOptions& options);

}  // namespace trnslurm::cli
