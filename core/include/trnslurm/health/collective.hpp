#pragma once
// The collective check on Neuron nodes (docs/health.md, "The collective"): nccom-test's output
// read back (its format: interfaces/nccom-test-2.29.json), the bus bandwidth the instance type
// should reach, the ring of node pairs run when the whole step is low or fails, and the verdict
// per node that names a slow node or pair.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trnslurm/health/finding.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::health {

struct NccomRow {
  std::uint64_t size = 0;  // bytes
  double busbw = 0;        // GiB/s, as nccom-test prints it
};

struct NccomResult {
  std::vector<NccomRow> rows;
  std::optional<double> avg_busbw;    // the "Avg bus bandwidth" line, GiB/s
  std::vector<std::string> failures;  // failed sizes, the summary line, or why the output is not a result
  bool ok() const { return failures.empty() && avg_busbw.has_value(); }
};

// Reads nccom-test's output: the table (columns found by their header, so --stats and
// --show-algorithm columns do not matter), the average line and the failure lines. Output with
// no table, or cut before its average line, is a failure saying so.
NccomResult parse_nccom_output(std::string_view output);

// Our threshold, not AWS's promise: an all_reduce of 32 MiB across nodes should reach at least
// this share of the EFA bandwidth the instance type has (docs/health.md says why 10%).
inline constexpr double efa_share = 0.10;

struct ExpectedBusbw {
  double gib_per_s = 0;
  std::string why;  // "10% of trn1.32xlarge's 800 Gbps EFA"
};

// The type's collective_busbw_gb_per_s when the table gives one, else efa_share of efa_gbps;
// nullopt when neither is known (a type without EFA).
std::optional<ExpectedBusbw> expected_busbw(const InstanceType& type);

// The ring's pairs (edge i joins node i and node i + 1 mod n) in rounds of pairs that share no
// node, so a round runs at once: two rounds for an even n, three for an odd one. None below 3
// nodes (two nodes are one pair: the whole step).
std::vector<std::vector<std::size_t>> ring_rounds(std::size_t nodes);

// Which edges and nodes of the ring are slow: an edge with no figure (its run failed) or one
// `slow_factor` times below the fastest; a node at both ends of slow edges is a slow node, and
// the slow edges left unexplained by one are slow pairs.
struct RingVerdict {
  std::vector<std::size_t> slow_nodes;
  std::vector<std::size_t> slow_pairs;  // edge indices
  double fastest = 0;
};
RingVerdict attribute_ring(const std::vector<std::optional<double>>& edges, double slow_factor = 4.0);

// Whether the pairs must run: the whole step failed or is below the expected figure, on 3 nodes
// or more.
bool needs_pairs(const NccomResult& whole, const std::optional<ExpectedBusbw>& expected, std::size_t nodes);

// One "collective" finding per node, in `nodes` order. `pairs` holds the ring's results by edge
// (empty when they did not run).
std::vector<Finding> judge_collective(const std::vector<std::string>& nodes, const NccomResult& whole,
                                      const std::optional<ExpectedBusbw>& expected,
                                      const std::vector<NccomResult>& pairs);

// The CPU backend's collective (scripts/cpu/health_collective.py): a gloo all_reduce and a ring
// of links, each timed at its receiver, as rank 0 prints them (one JSON line, "gloo_ring").
struct GlooRing {
  std::vector<std::string> nodes;       // in rank order
  std::vector<double> links_mib_per_s;  // link i: node i-1 -> node i
  std::uint64_t bytes = 0;              // the all_reduce's
  double busbw = 0;                     // GiB/s
  bool sum_ok = true;
};
Result<GlooRing> parse_gloo_ring(std::string_view line);

// One or more "collective" findings per node, in `ring.nodes` order, by attribute_ring's rule on
// three nodes or more: the slow node FAILs, a slow link it does not explain is a warn on its
// receiver; a wrong sum FAILs every node.
std::vector<std::vector<Finding>> judge_gloo_ring(const GlooRing& ring);

}  // namespace trnslurm::health
