#include "trnslurm/plan/placement.hpp"

#include "trnslurm/util/parse_number.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace trnslurm {

namespace {

// Slurm's series as a number: "24.05.1" -> 2405; 0 when unreadable.
unsigned series(std::string_view version) {
  const auto first = version.find('.');
  if (first == std::string_view::npos) return 0;
  const auto rest = version.substr(first + 1);
  const auto major = parse_number<unsigned>(version.substr(0, first));
  const auto minor = parse_number<unsigned>(rest.substr(0, rest.find('.')));
  return major ? *major * 100 + minor.value_or(0) : 0;
}

constexpr unsigned segment_series = 2405;  // --segment and --exclusive=topo (RELEASE_NOTES 24.05)

bool is_prefix(std::string_view f) {
  return f.ends_with('*');
}

}  // namespace

Placement plan_placement(const PlacementInput& in) {
  Placement p;
  p.ultraserver_nodes = in.ultraserver_nodes;
  if (in.ultraserver_nodes <= 1) {
    p.why = fmt::format("{} is not part of an UltraServer", in.instance);
    return p;
  }
  // The fewest servers that hold whole TP x PP groups: a group of 96 cores on 64-core servers
  // spans 1.5 servers, and three servers hold two whole groups.
  const std::uint64_t cores = std::max<std::uint32_t>(in.cores_per_node, 1);
  p.group_nodes =
      static_cast<std::uint32_t>(std::lcm(std::max<std::uint64_t>(in.model_parallel, 1), cores) / cores);
  if (in.nodes <= 1 || p.group_nodes <= 1) {
    p.why =
        fmt::format("each TP x PP group ({} cores) fits in one {} server", in.model_parallel, in.instance);
    return p;
  }
  if (p.group_nodes > in.ultraserver_nodes) {
    p.warnings.push_back(fmt::format(
        "a TP x PP group of {} cores spans {} servers, more than the {} of one {} UltraServer: its pipeline "
        "stages meet over EFA between UltraServers; no placement is requested",
        in.model_parallel, p.group_nodes, in.ultraserver_nodes, in.instance));
    p.why = "the groups are larger than an UltraServer";
    return p;
  }
  if (in.method == "none") {
    p.why = "slurm.ultraserver_placement = none";
    p.warnings.push_back(
        fmt::format("TP x PP groups span {} servers and nothing keeps them in one UltraServer "
                    "(slurm.ultraserver_placement = none)",
                    p.group_nodes));
    return p;
  }
  const unsigned have = series(in.slurm_version);
  std::string method = in.method;
  std::string chosen;
  if (method == "auto") {
    method = have >= segment_series ? "segment" : "constraint";
    chosen = have >= segment_series
                 ? fmt::format("Slurm {} has topology/block's --segment (24.05 and later)", in.slurm_version)
                 : fmt::format(
                       "Slurm {} has no --segment (added in 24.05): a node feature per UltraServer "
                       "instead",
                       in.slurm_version.empty() ? "of unknown version" : in.slurm_version);
  } else {
    chosen = fmt::format("slurm.ultraserver_placement = {}", method);
  }
  p.method = method;
  if (method == "segment") {
    p.sbatch_args = {fmt::format("--segment={}", p.group_nodes)};
    p.why = fmt::format(
        "{}: each run of {} nodes (whole TP x PP groups) in one block; topology.conf must "
        "make each UltraServer a block of {} nodes (BlockSizes={})",
        chosen, p.group_nodes, in.ultraserver_nodes, in.ultraserver_nodes);
    if (in.method == "segment" && have != 0 && have < segment_series)
      p.warnings.push_back(fmt::format("--segment needs Slurm 24.05 or later; this trnslurm was built for {}",
                                       in.slurm_version));
    return p;
  }
  // A matching-OR constraint puts every node of the job on one feature: the whole job in one
  // UltraServer, so only jobs that fit in one.
  if (in.nodes > in.ultraserver_nodes) {
    p.method = "none";
    p.why = chosen;
    p.warnings.push_back(fmt::format(
        "{} nodes are more than one {}-server UltraServer: a node-feature constraint can only keep a whole "
        "job in one, and Slurm before 24.05 cannot keep each group of {} servers in one; use at most {} "
        "nodes, "
        "or Slurm 24.05+ with topology/block (slurm.ultraserver_placement = segment)",
        in.nodes, in.ultraserver_nodes, p.group_nodes, in.ultraserver_nodes));
    return p;
  }
  p.features = in.features;
  if (p.features.empty()) {
    p.method = "none";
    p.why = chosen;
    p.warnings.push_back(
        "the job must stay in one UltraServer but slurm.ultraserver_features names no node feature: give "
        "each UltraServer's nodes a feature in slurm.conf (Features=us1) and list them, or a prefix "
        "(\"us*\")");
    return p;
  }
  p.why = fmt::format("{}: all {} nodes in one UltraServer, --constraint matching OR of its features", chosen,
                      in.nodes);
  if (std::ranges::none_of(p.features, is_prefix))
    p.sbatch_args = {fmt::format("--constraint=[{}]", fmt::join(p.features, "|"))};
  return p;
}

Result<std::string> constraint_arg(const std::vector<std::string>& features,
                                   const std::vector<std::string>& node_features) {
  std::vector<std::string> names;
  for (const auto& f : features) {
    if (!is_prefix(f)) {
      if (std::ranges::find(names, f) == names.end()) names.push_back(f);
      continue;
    }
    const std::string_view prefix = std::string_view(f).substr(0, f.size() - 1);
    for (const auto& n : node_features)
      if (n.starts_with(prefix) && std::ranges::find(names, n) == names.end()) names.push_back(n);
  }
  if (names.empty())
    return fail(fmt::format("no node of the cluster has a feature matching {}", fmt::join(features, ", ")),
                "slurm.ultraserver_features",
                "give each UltraServer's nodes a feature (slurm.conf Features=)");
  std::ranges::sort(names);
  return fmt::format("--constraint=[{}]", fmt::join(names, "|"));
}

}  // namespace trnslurm
