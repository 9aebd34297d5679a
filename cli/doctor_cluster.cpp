#include "doctor_cluster.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

#include "colour.hpp"
#include "commands.hpp"
#include "install_paths.hpp"
#include "output.hpp"
#include "process.hpp"
#include "slurm_lookup.hpp"
#include "trnslurm/health/cluster_report.hpp"
#include "trnslurm/health/node_selection.hpp"

namespace trnslurm::cli {

namespace {

// The srun line of the one job: a task on each node running the hidden per-node step.
std::vector<std::string> srun_argv(const ClusterDoctorOptions& o) {
  std::vector<std::string> argv{"srun", "--job-name=trnslurm-doctor", "--ntasks-per-node=1",
                                "--kill-on-bad-exit=0", "--time=5"};
  if (o.partition) argv.push_back("--partition=" + *o.partition);
  if (o.nodelist) argv.push_back("--nodelist=" + *o.nodelist);
  if (o.nodes)
    argv.push_back(fmt::format("--nodes={}", *o.nodes));
  else if (o.nodelist)
    argv.push_back(fmt::format("--nodes={}",
                               slurm_lookup::hosts(*o.nodelist).value_or(std::vector<std::string>{}).size()));
  argv.push_back(self_exe().string());
  argv.push_back("health-node");
  if (o.health.checks) argv.push_back("--checks=" + *o.health.checks);
  if (o.health.checkpoint_dir) argv.push_back("--checkpoint-dir=" + *o.health.checkpoint_dir);
  if (o.health.checkpoint_bytes)
    argv.push_back(fmt::format("--checkpoint-bytes={}", o.health.checkpoint_bytes));
  return argv;
}

void print_rows(const std::vector<health::NodeRow>& rows) {
  const bool colour = colour_enabled(stdout);
  std::size_t width = 4;
  for (const auto& r : rows) width = std::max(width, r.node.size());
  for (const auto& r : rows) {
    const auto tag = health::to_string(r.status);
    const auto padded = fmt::format("{:<4}", tag);
    fmt::print("{:<{}}  {}  {}\n", r.node, width,
               paint(tag, state_colour(tag), colour) + padded.substr(tag.size()),
               r.status == health::Status::ok ? std::string("every check passed") : r.why);
  }
}

// Slurm's view of the partition's nodes, read by the core's selection.
Result<health::NodeSelection> usable_nodes(const std::optional<std::string>& partition) {
  const auto ran = run_process(health::sinfo_nodes_command());
  if (!ran) return std::unexpected(classified(ran.error(), ErrorKind::slurm));
  if (ran->exit_code != 0)
    return fail(ErrorKind::slurm,
                fmt::format("sinfo exited {}: {}", ran->exit_code, ran->err.substr(0, ran->err.find('\n'))),
                "sinfo", "is Slurm reachable from here (SLURM_CONF)?");
  return health::select_nodes(ran->out, partition);
}

std::string skipped_list(const std::vector<health::SkippedNode>& skipped) {
  std::string out;
  for (const auto& s : skipped) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s.node, s.why);
  return out;
}

}  // namespace

Result<std::vector<health::NodeRow>> check_cluster(const ClusterDoctorOptions& o) {
  if (o.health.checks)
    if (auto c = health::parse_checks(*o.health.checks, "--checks"); !c) return std::unexpected(c.error());
  if (o.nodelist && !slurm_lookup::hosts(*o.nodelist))
    return fail(fmt::format("'{}' is not a Slurm node list", *o.nodelist), "--nodelist", "e.g. n[1-4],n7");
  const auto ran = run_process(srun_argv(o));
  if (!ran) return std::unexpected(ran.error());
  const auto reports = health::read_node_reports(ran->out);
  std::string job_nodes;
  for (const auto& r : reports)
    if (job_nodes.empty()) job_nodes = r.job_nodes;
  const auto first_err = ran->err.substr(0, ran->err.find('\n'));
  if (reports.empty())
    return fail(ErrorKind::slurm, fmt::format("no node answered (srun exited {})", ran->exit_code),
                "pre-flight", first_err.empty() ? "is Slurm reachable from here?" : first_err);
  std::vector<std::string> expected;
  if (o.nodelist)
    expected = *slurm_lookup::hosts(*o.nodelist);
  else if (!job_nodes.empty())
    expected = slurm_lookup::hosts(job_nodes).value_or(std::vector<std::string>{});
  return health::node_rows(
      expected, reports,
      fmt::format("srun exited {}: {}", ran->exit_code,
                  first_err.empty() ? std::string("the step ended without its output") : first_err));
}

int run_cluster_doctor(const ClusterDoctorOptions& options) {
  auto o = options;
  // Neither a count nor a list, outside a job (inside one, srun takes the job's own nodes): every
  // node of the partition that can run a job now, and the others named.
  std::optional<health::NodeSelection> selected;
  if (!o.nodes && !o.nodelist && !std::getenv("SLURM_JOB_ID")) {
    auto s = usable_nodes(o.partition);
    if (!s) {
      return exit_with(s.error(), ErrorKind::input);  // sinfo's failures are Slurm's
    }
    if (s->usable.empty()) {
      return exit_with(Error{fmt::format("no node of partition {} can run a job now", s->partition),
                             "doctor --cluster", "skipped: " + skipped_list(s->skipped)},
                       ErrorKind::slurm);
    }
    o.partition = s->partition;
    o.nodes = static_cast<unsigned>(s->usable.size());
    o.nodelist = fmt::format("{}", fmt::join(s->usable, ","));
    if (!o.json) {
      const auto n = s->usable.size();
      fmt::print("partition {}: checking {}{} node{}", s->partition,
                 s->skipped.empty() && n > 1 ? "all " : "", n, n == 1 ? "" : "s");
      if (!s->skipped.empty()) fmt::print("; skipped {}: {}", s->skipped.size(), skipped_list(s->skipped));
      fmt::print("\n");
      (void)std::fflush(stdout);  // said before the job runs, which may wait for busy nodes
    }
    selected = std::move(*s);
  }
  const auto checked = check_cluster(o);
  if (!checked) {
    return exit_with(checked.error(), ErrorKind::input);  // no node answering is Slurm's
  }
  const auto& rows = *checked;
  const bool ok = health::failed_nodes(rows).empty();
  if (o.json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json checks = nlohmann::json::array();
      for (const auto& f : r.findings)
        checks.push_back({{"check", f.check}, {"status", health::to_string(f.status)}, {"detail", f.detail}});
      nodes.push_back(
          {{"node", r.node}, {"status", health::to_string(r.status)}, {"why", r.why}, {"checks", checks}});
    }
    nlohmann::json out{{"ok", ok}, {"nodes", nodes}};
    if (selected) {
      nlohmann::json skipped = nlohmann::json::array();
      for (const auto& s : selected->skipped)
        skipped.push_back({{"node", s.node}, {"state", s.state}, {"why", s.why}});
      out["partition"] = selected->partition;
      out["skipped"] = skipped;
    }
    fmt::print("{}\n", out.dump(2));
  } else {
    print_rows(rows);
  }
  return ok ? exit_ok : exit_failure;
}

}  // namespace trnslurm::cli
