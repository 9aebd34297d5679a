#pragma once
// The collective check on Neuron nodes (docs/health.md, "The collective"): nccom-test across the
// step's nodes, started once from the step's first task as its interface record says (it starts
// the workers on the other hosts itself), then, when the figure is low or the run fails, along a
// ring of node pairs to name the slow node or pair.

#include <string>
#include <vector>

#include "trnslurm/health/cluster_report.hpp"
#include "trnslurm/node/topology.hpp"

namespace trnslurm::cli {

// One report per node of the step (`nodes`), each with its "collective" finding. `tool` is the
// nccom-test to run (TRNSLURM_NCCOM_TEST, else nccom-test on PATH); `instance` this node's type.
std::vector<health::NodeReport> neuron_collective(const std::vector<std::string>& nodes,
                                                  const NodeInstance& instance, const Topology& topology,
                                                  const std::string& job_nodes);

}  // namespace trnslurm::cli
