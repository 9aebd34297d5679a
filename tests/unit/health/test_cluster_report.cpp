#include <catch2/catch.hpp>

#include "trnslurm/health/cluster_report.hpp"

using namespace trnslurm::health;

TEST_CASE("cluster report: a node's line goes out and comes back the same") {
  const NodeReport r{
      "n3",
      {{"errors", Status::fail, "neuron device 5: 3 \"SRAM\" errors"}, {"cores", Status::ok, "none"}},
      "n[1-3]"};
  const auto line = to_json_line(r);
  CHECK(line.find('\n') == std::string::npos);
  const auto back = parse_node_report(line);
  REQUIRE(back);
  CHECK(back->node == "n3");
  CHECK(back->job_nodes == "n[1-3]");
  REQUIRE(back->findings.size() == 2);
  CHECK(back->findings[0].status == Status::fail);
  CHECK(back->findings[0].detail == "neuron device 5: 3 \"SRAM\" errors");
  CHECK_FALSE(parse_node_report("srun: error: n2: task 1: Exited with exit code 1"));
  CHECK_FALSE(parse_node_report(R"({"node":"n1","findings":[{"status":"bad"}]})"));
}

TEST_CASE("cluster report: one row per node, a silent node is a FAIL, reports merge") {
  const std::vector<NodeReport> reports{
      {"n1", {{"errors", Status::ok, "zero"}}, ""},
      {"n3", {{"errors", Status::fail, "3 SRAM errors"}, {"cores", Status::warn, "unknown"}}, ""},
      {"n1", {{"collective", Status::warn, "slow"}}, ""},
  };
  const auto rows = node_rows({"n1", "n2", "n3"}, reports, "srun exited 1");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].status == Status::warn);
  CHECK(rows[0].why == "collective: slow");
  CHECK(rows[1].status == Status::fail);
  CHECK(rows[1].why == "report: no report: srun exited 1");
  CHECK(rows[2].why == "errors: 3 SRAM errors");
  CHECK(failed_nodes(rows) == std::vector<std::string>{"n2", "n3"});
}
