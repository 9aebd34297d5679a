#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "trnslurm/health/collective.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

namespace {

// nccom-test's table as interfaces/nccom-test-2.29.json describes it (header, one row per size,
// the average line), with made-up figures.
constexpr std::string_view good = R"(
       size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)
       1048576          262144     fp32         100          9.77          13.02
      33554432         8388608     fp32        1500         20.83          27.78
Avg bus bandwidth:	20.4000GB/s
)";

NccomResult result(double busbw) {
  return parse_nccom_output(
      fmt::format("size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n"
                  "33554432 8388608 fp32 100 1.0 {0}\nAvg bus bandwidth:  {0}GB/s\n",
                  busbw));
}

InstanceType type_with(double efa_gbps) {
  InstanceType t;
  t.name = "trn1.32xlarge";
  t.efa_gbps.value = efa_gbps;
  return t;
}

}  // namespace

TEST_CASE("nccom-test output: the table and its average") {
  const auto r = parse_nccom_output(good);
  CHECK(r.ok());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[1].size == 33554432);
  CHECK(r.rows[1].busbw == Approx(27.78));
  CHECK(r.avg_busbw.value_or(0) == Approx(20.4));
}

TEST_CASE("nccom-test output: --stats and --show-algorithm columns are found by the header") {
  const auto r = parse_nccom_output(
      "size(B) count(elems) type time:avg(us) time:p50(us) algbw(GB/s) busbw(GB/s) algorithm\n"
      "524288 131072 fp32 14.83 15 35.34 30.92 mesh\nAvg bus bandwidth:\t30.9200GB/s\n");
  CHECK(r.ok());
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].busbw == Approx(30.92));
}

TEST_CASE("nccom-test output: the failure lines") {
  const auto r = parse_nccom_output(
      "     size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
      "    33554432    Failure running neuron-bench - log file /tmp/nccom_test_log_x.log\n"
      "1 errors found - test failed\n");
  CHECK_FALSE(r.ok());
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0] == "size 33554432: Failure running neuron-bench - log file /tmp/nccom_test_log_x.log");
  CHECK(r.failures[1] == "1 errors found - test failed");
}

TEST_CASE("nccom-test output: a message instead of a table, a table cut short, nothing") {
  const auto early = parse_nccom_output("Neuron DKMS Driver is not running! Read the guide\n");
  CHECK_FALSE(early.ok());
  CHECK(early.failures.at(0) == "no result table: 'Neuron DKMS Driver is not running! Read the guide'");
  const auto cut = parse_nccom_output(good.substr(0, good.find("Avg")));
  CHECK_FALSE(cut.ok());
  CHECK(cut.rows.size() == 2);
  CHECK(cut.failures.at(0) == "the output ends before its average line (cut short?)");
  const auto half_row = parse_nccom_output(good.substr(0, good.find("27.78")));
  CHECK_FALSE(half_row.ok());
  CHECK(half_row.failures.at(0).starts_with("unexpected line '33554432"));
  CHECK(parse_nccom_output("").failures.at(0) == "no output");
}

TEST_CASE("collective: the expected bus bandwidth") {
  const auto e = expected_busbw(type_with(800));
  REQUIRE(e);
  CHECK(e->gib_per_s == Approx(800e9 / 8 * 0.10 / (1ULL << 30)));
  CHECK(e->why == "10% of trn1.32xlarge's 800 Gbps EFA");
  CHECK_FALSE(expected_busbw(type_with(0)));
  auto site = type_with(0);
  site.collective_busbw_gb_per_s.value = 0.05;
  CHECK(expected_busbw(site)->gib_per_s == Approx(0.05));
}

TEST_CASE("collective: the ring's pairs in rounds of disjoint pairs") {
  CHECK(ring_rounds(2).empty());
  CHECK(ring_rounds(3) == std::vector<std::vector<std::size_t>>{{0}, {1}, {2}});
  CHECK(ring_rounds(4) == std::vector<std::vector<std::size_t>>{{0, 2}, {1, 3}});
  CHECK(ring_rounds(5) == std::vector<std::vector<std::size_t>>{{0, 2}, {1, 3}, {4}});
  for (const std::size_t n : {3U, 4U, 7U, 16U}) {
    std::size_t edges = 0;
    for (const auto& round : ring_rounds(n)) {
      std::vector<int> used(n, 0);
      for (const auto e : round) {
        ++edges;
        CHECK(++used[e] == 1);
        CHECK(++used[(e + 1) % n] == 1);
      }
    }
    CHECK(edges == n);
  }
}

TEST_CASE("collective: a node at both ends of slow pairs is named, a lone slow pair too") {
  // Edge i joins node i and i+1: node 2 of 4 slows edges 1 and 2.
  auto v = attribute_ring({10.0, 1.0, 1.5, 9.0});
  CHECK(v.slow_nodes == std::vector<std::size_t>{2});
  CHECK(v.slow_pairs.empty());
  CHECK(v.fastest == Approx(10.0));
  // A failed run counts as slow.
  v = attribute_ring({10.0, std::nullopt, 9.0, 9.5});
  CHECK(v.slow_nodes.empty());
  CHECK(v.slow_pairs == std::vector<std::size_t>{1});
  v = attribute_ring({10.0, 9.0, 8.0});
  CHECK(v.slow_nodes.empty());
  CHECK(v.slow_pairs.empty());
}

TEST_CASE("collective: the verdict per node") {
  const std::vector<std::string> nodes{"n1", "n2", "n3"};
  const auto expected = expected_busbw(type_with(800));
  // Fast enough: every node ok, no pairs needed.
  const auto fast = result(30);
  CHECK_FALSE(needs_pairs(fast, expected, 3));
  auto f = judge_collective(nodes, fast, expected, {});
  REQUIRE(f.size() == 3);
  CHECK(f[0].status == Status::ok);
  CHECK(f[0].detail.starts_with(
      "nccom-test all_reduce across 3 nodes: 30.00 GB/s bus bandwidth, expected at least"));
  // Low: the pairs name n3 (edges n2-n3 and n3-n1 slow).
  const auto low = result(2);
  CHECK(needs_pairs(low, expected, 3));
  CHECK_FALSE(needs_pairs(low, expected, 2));
  f = judge_collective(nodes, low, expected, {result(20), result(2), result(3)});
  CHECK(f[0].status == Status::ok);
  CHECK(f[1].status == Status::ok);
  CHECK(f[2].status == Status::fail);
  CHECK(f[2].detail ==
        "this node is slow: its pairs n2-n3 2.00 GB/s and n3-n1 3.00 GB/s, the fastest pair 20.00 GB/s");
  // Low everywhere alike: a warning on every node, no one named.
  f = judge_collective(nodes, low, expected, {result(2), result(2), result(2)});
  for (const auto& x : f) CHECK(x.status == Status::warn);
  CHECK(f[0].detail.ends_with("every pair of the ring alike (fastest 2.00 GB/s): not one node"));
  // Every run failed alike: the set-up's failure, not a node's; no node is failed for it.
  const auto failed_run = parse_nccom_output("Neuron DKMS Driver is not running!\n");
  f = judge_collective(nodes, failed_run, expected, {failed_run, failed_run, failed_run});
  for (const auto& x : f) CHECK(x.status == Status::warn);
  CHECK(
      f[2].detail.ends_with("; every pair of the ring failed too (failed (no result table: 'Neuron DKMS "
                            "Driver is not running!')): not one node"));
  // One pair measured: the failed ones still name their node.
  f = judge_collective(nodes, failed_run, expected, {result(20), failed_run, failed_run});
  CHECK(f[2].status == Status::fail);
  // Two nodes: one pair, the whole; a failure fails both.
  const auto failed = parse_nccom_output("1 errors found - test failed\n");
  f = judge_collective({"n1", "n2"}, failed, expected, {});
  CHECK(f[0].status == Status::fail);
  CHECK(f[1].status == Status::fail);
  CHECK(f[1].detail.find("one pair, so the slow node cannot be told") != std::string::npos);
}

TEST_CASE("gloo ring: the CPU collective's measurements judged by the same rule") {
  const auto ring = parse_gloo_ring(
      R"({"gloo_ring": {"nodes": ["n1", "n2", "n3"], "links_mib_per_s": [900.0, 800.0, 30.0],
          "bytes": 33554432, "busbw": 0.5, "sum_ok": true}})");
  REQUIRE(ring);
  // Link i runs into node i: n3 slow slows n2->n3 (into n3)... here only n2->n3 is slow: a lone
  // slow link, a warn on its receiver.
  auto f = judge_gloo_ring(*ring);
  REQUIRE(f.size() == 3);
  CHECK(f[0][0].status == Status::ok);
  CHECK(f[0][0].detail ==
        "gloo all_reduce of 32 MiB on 3 nodes: 0.50 GB/s bus bandwidth; its link in 900 MiB/s");
  CHECK(f[1][0].status == Status::ok);
  CHECK(f[2][0].status == Status::warn);
  CHECK(f[2][0].detail == "link n2->n3 at 30 MiB/s, the fastest 900 MiB/s");
  // n3 slow: the links into it and out of it (n3->n1, into n1).
  auto slow = *ring;
  slow.links_mib_per_s = {40.0, 900.0, 30.0};
  f = judge_gloo_ring(slow);
  CHECK(f[0][0].status == Status::ok);
  CHECK(f[2][0].status == Status::fail);
  CHECK(f[2][0].detail ==
        "this node is slow: its links n2->n3 at 30 MiB/s and n3->n1 at 40 MiB/s, the fastest 900 MiB/s");
  // Two nodes: no one named; a wrong sum fails everyone.
  auto two = GlooRing{{"n1", "n2"}, {900.0, 10.0}, 1 << 20, 1.0, false};
  f = judge_gloo_ring(two);
  CHECK(f[0][0].status == Status::fail);
  CHECK(f[0][0].detail == "all_reduce gave a wrong sum");
  CHECK(f[1].size() == 1);
  CHECK_FALSE(parse_gloo_ring("srun: error: n2: task 1"));
  CHECK_FALSE(parse_gloo_ring(R"({"gloo_ring": {"nodes": ["n1"], "links_mib_per_s": []}})"));
}
