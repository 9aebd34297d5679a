#pragma once
// Which nodes `doctor --cluster` checks when asked for neither a count nor a list (docs/health.md):
// every node of the partition (or the default partition) that can run a job now, read from
// Slurm's own view of its nodes; the others are named with the state that kept them out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm::health {

// The sinfo arguments whose output select_nodes reads: one line per node and partition,
// "NODE|PARTITION|STATE" (the default partition marked '*', the state in sinfo's long form with
// its flag characters, e.g. "idle", "drained", "down*", "idle~").
std::vector<std::string> sinfo_nodes_command();

struct SkippedNode {
  std::string node;
  std::string state;  // as sinfo shows it, e.g. "down*"
  std::string why;    // for people: "down, not responding", "powered down"
};

struct NodeSelection {
  std::string partition;            // the partition asked for, else the default's name
  std::vector<std::string> usable;  // in sinfo's order
  std::vector<SkippedNode> skipped;
};

// "" when a node in this state takes a job now (idle, mixed, allocated, completing, planned, with
// no flag that keeps it out); otherwise why not, in words.
std::string unusable_reason(std::string_view state);

// The nodes of `partition` (nullopt: the default partition) in the output of sinfo_nodes_command.
// An error when the partition does not exist or there is no default to fall back on (where:
// "--partition"); a partition without a usable node is no error (usable is empty).
Result<NodeSelection> select_nodes(std::string_view sinfo_output,
                                   const std::optional<std::string>& partition);

}  // namespace trnslurm::health
