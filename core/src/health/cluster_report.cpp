#include "trnslurm/health/cluster_report.hpp"

#include "trnslurm/util/parse_number.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

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

namespace {

constexpr std::string_view report_prefix = "trnslurm-report ";
constexpr std::size_t part_bytes = 768;  // with its prefix, well under Slurm's 1024-byte messages

// The first word of `s` and the rest after one space; nullopt when there is no space.
std::optional<std::pair<std::string_view, std::string_view>> word(std::string_view s) {
  const auto space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return std::pair{s.substr(0, space), s.substr(space + 1)};
}

}  // namespace

std::string to_report_lines(const NodeReport& report, std::string_view sender) {
  const auto json = to_json_line(report);
  const std::size_t parts = std::max<std::size_t>(1, (json.size() + part_bytes - 1) / part_bytes);
  std::string out;
  for (std::size_t i = 0; i < parts; ++i)
    out += fmt::format("{}{} {} {} {}\n", report_prefix, sender, i + 1, parts,
                       std::string_view(json).substr(i * part_bytes, part_bytes));
  return out;
}

std::vector<NodeReport> read_node_reports(std::string_view output) {
  std::vector<NodeReport> reports;
  std::map<std::string, std::vector<std::optional<std::string>>, std::less<>> pending;
  const auto take = [&](std::string_view line) {
    if (!line.starts_with(report_prefix)) {
      if (auto r = parse_node_report(line)) reports.push_back(std::move(*r));
      return;
    }
    const auto sender = word(line.substr(report_prefix.size()));
    const auto index = sender ? word(sender->second) : std::nullopt;
    const auto count = index ? word(index->second) : std::nullopt;
    const auto i = index ? parse_number<std::size_t>(index->first) : std::nullopt;
    const auto n = count ? parse_number<std::size_t>(count->first) : std::nullopt;
    if (!i || !n || *i == 0 || *i > *n || *n > 4096) return;
    auto& parts = pending.try_emplace(std::string(sender->first), *n).first->second;
    if (parts.size() != *n) return;
    parts[*i - 1] = std::string(count->second);
    if (std::ranges::any_of(parts, [](const auto& p) { return !p; })) return;
    std::string json;
    for (const auto& p : parts) json += *p;
    pending.erase(std::string(sender->first));
    if (auto r = parse_node_report(json)) reports.push_back(std::move(*r));
  };
  std::size_t start = 0;
  while (start < output.size()) {
    auto end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    take(output.substr(start, end - start));
    start = end + 1;
  }
  return reports;
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
