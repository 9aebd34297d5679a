#pragma once
// The inputs of the node checks (core/include/trnslurm/health/node_checks.hpp) as a node's
// front end finds them: the plugstack settings for root=, instances= and state_dir=, the
// process's limits and ids, the compile cache the steps get. Shared by `doctor` and the per-node
// step of `doctor --cluster` and the train stage's pre-flight.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "trnslurm/health/node_checks.hpp"
#include "trnslurm/node/settings.hpp"

namespace trnslurm::cli {

struct NodeHealthOptions {
  std::optional<std::string> checks;          // comma-separated names; none = every node check
  std::optional<std::string> checkpoint_dir;  // the disk check's directory
  std::uint64_t checkpoint_bytes = 0;         // one checkpoint, from the plan
  bool probe = true;                          // load libfabric now when slurmd saved no answer
};

Result<health::NodeCheckInputs> node_check_inputs(const SiteSettings& site, const std::string& node,
                                                  const NodeHealthOptions& options);

// Adds the options above to a subcommand (doctor, and the hidden per-node step).
void add_node_health_options(CLI::App& sub, NodeHealthOptions& options);

}  // namespace trnslurm::cli
