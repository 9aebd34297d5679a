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

TEST_CASE("cluster report: long reports of several nodes survive Slurm cutting and interleaving them") {
  // Slurm hands srun a task's output in messages of at most 1024 bytes and srun writes several
  // tasks' messages as they come: lines are kept short, and parts of two nodes mixed come back.
  const NodeReport a{"n1", {{"libfabric", Status::warn, std::string(2000, 'a')}}, "n[1-2]"};
  const NodeReport b{"n2", {{"errors", Status::fail, std::string(1500, 'b') + " \xc3\xa9"}}, "n[1-2]"};
  const auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
      const auto end = text.find('\n', start);
      REQUIRE(end != std::string::npos);  // every line ends
      lines.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return lines;
  };
  const auto la = lines_of(to_report_lines(a, "n1/10"));
  const auto lb = lines_of(to_report_lines(b, "n2/20"));
  REQUIRE(la.size() >= 3);
  REQUIRE(lb.size() >= 2);
  for (const auto& l : la) CHECK(l.size() < 1024);
  // b's parts, then a's last part first, noise between: b completes first.
  std::string out = "srun: warning: something\n";
  for (const auto& l : lb) out += l + "\n";
  out += la.back() + "\n";
  for (std::size_t i = 0; i + 1 < la.size(); ++i) out += la[i] + "\n" + "not a report\n";
  const auto reports = read_node_reports(out);
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].node == "n2");
  CHECK(reports[0].findings.at(0).detail == b.findings[0].detail);
  CHECK(reports[1].node == "n1");
  CHECK(reports[1].findings.at(0).detail == a.findings[0].detail);
  CHECK(reports[1].job_nodes == "n[1-2]");

  SECTION("a report with a part missing is left out, a whole JSON line is read") {
    std::string partial;
    for (std::size_t i = 1; i < la.size(); ++i) partial += la[i] + "\n";
    partial += to_json_line({"n3", {{"collective", Status::ok, "fine"}}, ""}) + "\n";
    const auto got = read_node_reports(partial);
    REQUIRE(got.size() == 1);
    CHECK(got[0].node == "n3");
  }
  SECTION("numbering that does not add up is ignored") {
    CHECK(read_node_reports("trnslurm-report n1/1 0 1 {}\ntrnslurm-report n1/1 2 1 {}\n"
                            "trnslurm-report n1/1 x 1 {}\ntrnslurm-report n1/1\n")
              .empty());
  }
}
