// `trnslurm health-node` (hidden): one node's pre-flight checks as a report on stdout
// (health::to_report_lines), run
// on every node by `doctor --cluster` and the train stage's pre-flight (docs/health.md). Exits 0
// whenever it could report: the verdict is the reader's.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ranges>

#include "commands.hpp"
#include "install_paths.hpp"
#include "neuron_collective.hpp"
#include "node_health.hpp"
#include "output.hpp"
#include "process.hpp"
#include "site_config.hpp"
#include "slurm_lookup.hpp"
#include "trnslurm/health/cluster_report.hpp"
#include "trnslurm/health/collective.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/node/topology.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  std::optional<std::string> node_name;
  NodeHealthOptions health;
};

int run(const Options& o) {
  const auto cfg = load_site_config(std::nullopt);
  health::NodeReport report;
  report.node = o.node_name.value_or(node_name());
  if (const char* nodes = std::getenv("SLURM_JOB_NODELIST")) report.job_nodes = nodes;
  const SiteSettings site = cfg.site ? *cfg.site : SiteSettings{};
  if (!cfg.site) report.findings.push_back({"plugstack", health::Status::fail, to_string(cfg.site.error())});
  const auto in = node_check_inputs(site, report.node, o.health);
  if (!in) {
    return exit_with(in.error(), ErrorKind::input);
  }
  auto findings = health::run_node_checks(*in);
  if (!findings)
    report.findings.push_back({"instances", health::Status::fail, to_string(findings.error())});
  else
    report.findings.insert(report.findings.end(), findings->begin(), findings->end());
  const auto sender = fmt::format("{}/{}", report.node, ::getpid());
  fmt::print("{}", health::to_report_lines(report, sender));
  (void)std::fflush(stdout);
  if (std::ranges::find(in->checks, "collective") == in->checks.end()) return exit_ok;
  // The collective across the step's nodes (rank 0 prints a line for every node). On the CPU
  // backend, gloo; on Neuron nodes, nccom-test (docs/health.md, "The collective").
  if (const auto topology = read_topology(in->root); !topology.devices.empty()) {
    if (const char* rank = std::getenv("SLURM_PROCID"); !rank || std::string_view(rank) != "0")
      return exit_ok;
    const char* step_nodes = std::getenv("SLURM_STEP_NODELIST");
    const auto nodes = slurm_lookup::hosts(step_nodes ? step_nodes : report.job_nodes)
                           .value_or(std::vector<std::string>{report.node});
    const auto instance = read_node_instance(topology, in->site_instances);
    if (!instance) {
      fmt::print("{}",
                 health::to_report_lines({report.node,
                                          {{"collective", health::Status::fail, to_string(instance.error())}},
                                          report.job_nodes},
                                         sender + "/collective"));
      return exit_ok;
    }
    for (const auto& r : neuron_collective(nodes, *instance, topology, report.job_nodes))
      fmt::print("{}", health::to_report_lines(r, sender + "/collective/" + r.node));
    return exit_ok;
  }
  const auto script = (backend_dir() / "health_collective.py").string();
  const auto ran = run_process({"/usr/bin/python3", script});
  if (!ran) {
    return exit_with(Error{"cannot run /usr/bin/python3 " + script, "health-node", "install python3-torch"},
                     ErrorKind::upstream);
  }
  if (ran->exit_code != 0) fmt::print(stderr, "{}", ran->err);
  if (const char* rank = std::getenv("SLURM_PROCID"); rank && std::string_view(rank) != "0") return exit_ok;
  // Rank 0's result is its last line.
  std::string_view last;
  for (const auto part : std::views::split(std::string_view(ran->out), '\n'))
    if (!std::ranges::empty(part)) last = std::string_view(part.begin(), part.end());
  const auto ring = health::parse_gloo_ring(last);
  if (!ring) {
    const auto why = ran->err.substr(0, ran->err.find('\n'));
    fmt::print("{}",
               health::to_report_lines(
                   {report.node,
                    {{"collective", health::Status::warn,
                      "the gloo collective gave no result" + (why.empty() ? std::string() : ": " + why)}},
                    report.job_nodes},
                   sender + "/collective"));
    return exit_ok;
  }
  const auto judged = health::judge_gloo_ring(*ring);
  for (std::size_t i = 0; i < ring->nodes.size(); ++i)
    fmt::print("{}", health::to_report_lines({ring->nodes[i], judged[i], report.job_nodes},
                                             sender + "/collective/" + ring->nodes[i]));
  return exit_ok;
}

}  // namespace

Command add_health_node(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("health-node", "One node's pre-flight checks as a report (for doctor --cluster)");
  sub->group("");  // hidden: run by trnslurm itself on the compute nodes
  sub->add_option("--node-name", opts->node_name, "This node's name, for %n in plugstack paths");
  add_node_health_options(*sub, opts->health);
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
