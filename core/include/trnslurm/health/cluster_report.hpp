#pragma once
// The pre-flight across nodes (docs/health.md): each node's findings as one JSON line, written by
// the per-node step and read back by `doctor --cluster` and the train stage, and the rows they
// print: one per node, ok / warn / FAIL and why.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/health/finding.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::health {

struct NodeReport {
  std::string node;
  std::vector<Finding> findings;
  std::string job_nodes;  // the job's node list as the node saw it (SLURM_JOB_NODELIST), "" = not said
};

// One line of JSON: {"node":..., "job_nodes":..., "findings":[{"check","status","detail"}...]}, no
// newline.
std::string to_json_line(const NodeReport& report);

// The line back; an error for anything else (a line of other output is not a report).
Result<NodeReport> parse_node_report(std::string_view line);

// Slurm forwards a task's output to srun in messages of at most 1024 bytes, and srun writes the
// messages of several tasks as they come: a longer line from one node is cut by another's. So a
// node sends its report as numbered lines well under that size ("trnslurm-report SENDER I N
// PART"; SENDER tells apart the reports of one node's processes), each newline-terminated.
std::string to_report_lines(const NodeReport& report, std::string_view sender);

// Every report in a step's output, in the order they were completed: the numbered parts put back
// together, and whole JSON lines (a report short enough to go as one line). A report with a part
// missing, and every other line, are left out.
std::vector<NodeReport> read_node_reports(std::string_view output);

struct NodeRow {
  std::string node;
  Status status = Status::ok;
  std::string why;  // the FAILs, else the warns, "; " between them; "" when ok
  std::vector<Finding> findings;
};

// One row per expected node, in that order, then any node that answered without being expected:
// a node that sent no report is a FAIL ("no report: ...", with `no_report_why`); a node's
// findings added from several reports (the collective's after its checks) are merged.
std::vector<NodeRow> node_rows(const std::vector<std::string>& expected,
                               const std::vector<NodeReport>& reports, const std::string& no_report_why);

// The nodes of rows whose status is FAIL, in row order.
std::vector<std::string> failed_nodes(const std::vector<NodeRow>& rows);

}  // namespace trnslurm::health
