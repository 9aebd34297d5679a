#include "trnslurm/health/cluster_report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace trnslurm::health {

std::string to_json_line(const NodeReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"check", f.check}, {"status", to_string(f.status)}, {"detail", f.detail}});
  nlohmann::json j{{"node", report.node}, {"findings", findings}};
  if (!report.job_nodes.empty()) j["job_nodes"] = report.job_nodes;
  return j.dump();
}

Result<NodeReport> parse_node_report(std::string_view line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("node") || !j["node"].is_string() ||
      !j.contains("findings") || !j["findings"].is_array())
    return fail("not a node report", "pre-flight output");
  NodeReport out{j["node"].get<std::string>(), {}, {}};
  if (j.contains("job_nodes") && j["job_nodes"].is_string())
    out.job_nodes = j["job_nodes"].get<std::string>();
  for (const auto& f : j["findings"]) {
    if (!f.is_object() || !f.contains("status") || !f["status"].is_string())
      return fail("a finding without a status", "pre-flight output of " + out.node);
    const auto status = parse_status(f["status"].get<std::string>());
    if (!status) return fail("a finding with an unknown status", "pre-flight output of " + out.node);
    out.findings.push_back({f.value("check", std::string()), *status, f.value("detail", std::string())});
  }
  return out;
}

std::vector<NodeRow> node_rows(const std::vector<std::string>& expected,
                               const std::vector<NodeReport>& reports, const std::string& no_report_why) {
  std::vector<NodeRow> rows;
  std::vector<bool> answered;
  for (const auto& n : expected) {
    rows.push_back({n, Status::ok, {}, {}});
    answered.push_back(false);
  }
  for (const auto& r : reports) {
    auto it = std::ranges::find(rows, r.node, &NodeRow::node);
    if (it == rows.end()) {
      rows.push_back({r.node, Status::ok, {}, {}});
      answered.push_back(false);
      it = rows.end() - 1;
    }
    answered[static_cast<std::size_t>(it - rows.begin())] = true;
    it->findings.insert(it->findings.end(), r.findings.begin(), r.findings.end());
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& row = rows[i];
    if (!answered[i]) row.findings.push_back({"report", Status::fail, "no report: " + no_report_why});
    row.status = worst(row.findings);
    if (row.status == Status::ok) continue;
    for (const auto& f : row.findings) {
      if (f.status != row.status) continue;
      if (!row.why.empty()) row.why += "; ";
      row.why += f.check + ": " + f.detail;
    }
  }
  return rows;
}

std::vector<std::string> failed_nodes(const std::vector<NodeRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (r.status == Status::fail) out.push_back(r.node);
  return out;
}

}  // namespace trnslurm::health
