#pragma once
// UltraServers as one scheduling domain (docs/instances.md, "UltraServers"): when a TP x PP
// group of a job spans servers of an UltraServer type, the sbatch request that keeps each group
// inside one UltraServer, and why that one.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

struct Placement {
  std::string method = "none";    // none, segment (--segment), constraint (node features)
  std::uint32_t group_nodes = 0;  // servers one run of whole TP x PP groups spans
  std::uint32_t ultraserver_nodes = 1;
  std::vector<std::string> features;     // constraint: names, or prefixes ending in '*'
  std::vector<std::string> sbatch_args;  // rendered; empty while a prefix awaits the cluster's features
  std::string why;
  std::vector<std::string> warnings;
};

struct PlacementInput {
  std::string instance;
  std::uint32_t ultraserver_nodes = 1;  // servers per UltraServer (1: not an UltraServer type)
  std::uint32_t nodes = 1;
  std::uint32_t cores_per_node = 1;
  std::uint64_t model_parallel = 1;   // tp x pp
  std::string method = "auto";        // slurm.ultraserver_placement
  std::vector<std::string> features;  // slurm.ultraserver_features
  std::string slurm_version;          // "22.05.8": auto picks --segment from 24.05 on
};

Placement plan_placement(const PlacementInput& in);

// --constraint=[a|b|...] from the features asked for, a prefix ("us*") standing for every node
// feature of the cluster that starts with it (`node_features`: what `sinfo -o %f` lists).
Result<std::string> constraint_arg(const std::vector<std::string>& features,
                                   const std::vector<std::string>& node_features);

}  // namespace trnslurm
