// `trnslurm env`: what the plugin would set for one task, computed by the plugin's own core
// code (trnslurm/node/task_env.hpp) from the same inputs: this node's topology under the site's
// root, the slurmd's EFA answer, plugstack.conf's arguments, the --trn-* options and the
// caller's environment.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "commands.hpp"
#include "output.hpp"
#include "site_config.hpp"
#include "slurm_lookup.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/node/task_env.hpp"
#include "trnslurm/util/printable.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  std::uint32_t nodes = 1;
  std::uint32_t tasks_per_node = 1;
  std::uint32_t node_rank = 0;
  std::uint32_t local_id = 0;
  std::optional<std::string> nodelist;
  std::optional<std::string> node_name;
  std::optional<std::string> root;
  std::optional<std::string> plugstack;
  std::optional<std::string> trn_env, trn_cores, trn_efa, trn_cache, trn_launch;
  std::optional<std::string> trn_root_comm;  // "" = the default port
  bool explain = false;
  bool json = false;
  bool probe_efa = false;
  bool ignore_env = false;
};

std::optional<std::string> caller_getenv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

int usage_error(const Error& e) {
  return exit_with(e, ErrorKind::input);
}

int run(const Options& a) {
  if (a.nodes == 0 || a.tasks_per_node == 0)
    return usage_error({"--nodes and --tasks-per-node must be at least 1", "trnslurm env", ""});
  if (a.node_rank >= a.nodes)
    return usage_error(
        {fmt::format("--node-rank {} is not below --nodes {}", a.node_rank, a.nodes), "trnslurm env", ""});
  if (a.local_id >= a.tasks_per_node)
    return usage_error(
        {fmt::format("--local-id {} is not below --tasks-per-node {}", a.local_id, a.tasks_per_node),
         "trnslurm env", ""});

  const auto cfg = load_site_config(a.plugstack);
  if (!cfg.site) return usage_error(cfg.site.error());
  const SiteSettings& site = *cfg.site;

  UserOptions opts;
  const auto apply = [&](const char* name, const std::optional<std::string>& v, bool optional_value = false) {
    if (!v) return Result<void>{};
    std::optional<std::string_view> value;
    if (!(optional_value && v->empty())) value = *v;
    return apply_option(opts, name, value, site.defaults.root_comm_default_port);
  };
  for (auto r : {apply("trn-env", a.trn_env), apply("trn-cores", a.trn_cores), apply("trn-efa", a.trn_efa),
                 apply("trn-cache", a.trn_cache), apply("trn-root-comm", a.trn_root_comm, true),
                 apply("trn-launch", a.trn_launch)}) {
    if (!r) return usage_error(r.error());
  }

  NodeRequest request;
  request.site = site;
  request.settings = merge(site, opts);
  request.hostname = a.node_name.value_or("");
  request.task.nnodes = a.nodes;
  request.task.node_id = a.node_rank;
  request.task.local_count = a.tasks_per_node;
  request.task.local_id = a.local_id;
  request.task.total_tasks = a.nodes * a.tasks_per_node;
  request.task.global_id = a.node_rank * a.tasks_per_node + a.local_id;
  request.nodelist = a.nodelist;
  request.root = a.root;
  if (a.probe_efa) request.efa = probe_efa();
  request.user_env = !a.ignore_env;
  const auto in = gather_node_inputs(request, {caller_getenv, slurm_lookup::first_host, slurm_node_addr});
  if (!in) return usage_error(in.error());

  const auto plan = task_environment(*in);
  if (!plan) return usage_error(plan.error());
  const auto site_source = cfg.line
                               ? fmt::format("{}:{}", cfg.line->file, cfg.line->line)
                               : fmt::format("built-in defaults (no trnslurm line in {})", cfg.plugstack);
  if (a.json) {
    const auto vars = [](const auto& list) {
      auto j = nlohmann::json::array();
      for (const auto& v : list) j.push_back({{"name", v.name}, {"value", v.value}, {"reason", v.reason}});
      return j;
    };
    const nlohmann::json j{{"set", vars(plan->set)},
                           {"kept", vars(plan->kept)},
                           {"notes", plan->notes},
                           {"site_settings", site_source}};
    fmt::print("{}\n", j.dump(2));
    return exit_ok;
  }
  // Values are printed so that `eval "$(trnslurm env)"` works for any of them. A comment ends at
  // a newline: what goes after `#` is escaped onto its line (a kept value is the user's own, and
  // a newline in it would make the rest of it a command for that eval).
  for (const auto& v : plan->set) {
    const auto word = shell_word(v.value);
    if (!word) return usage_error(word.error());
    if (a.explain)
      fmt::print("{}={}  # {}\n", v.name, *word, printable(v.reason, 4096));
    else
      fmt::print("{}={}\n", v.name, *word);
  }
  if (a.explain) {
    for (const auto& v : plan->kept)
      fmt::print("# kept {}={}: {}\n", v.name, printable(v.value, 4096), printable(v.reason, 4096));
    for (const auto& n : plan->notes) fmt::print("# {}\n", printable(n, 4096));
    fmt::print("# site settings: {}\n", printable(site_source, 4096));
  }
  return exit_ok;
}

}  // namespace

Command add_env(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("env", "Print the environment the SPANK plugin gives a task, and why");
  sub->footer(
      "Runs the plugin's own code on this node: topology under plugstack.conf's root=, the slurmd's\n"
      "EFA probe result, plugstack.conf's defaults, the --trn-* options and your environment.\n"
      "Exit code: 0 printed, 2 bad option or a refusal (printed as the plugin prints it).\n"
      "Examples:\n"
      "  trnslurm env --explain\n"
      "  trnslurm env --nodes 4 --tasks-per-node 32 --node-rank 1 --local-id 5 --nodelist 'trn[1-4]'\n"
      "  set -a; eval \"$(trnslurm env --trn-cores=per-node)\"; set +a   # values are shell-quoted\n"
      "  trnslurm env --json | jq -r '.set[] | .name'");
  sub->add_option("--nodes", opts->nodes, "Nodes in the step")->check(CLI::PositiveNumber);
  sub->add_option("--tasks-per-node", opts->tasks_per_node, "Tasks of the step on this node");
  sub->add_option("--node-rank", opts->node_rank, "This node's index in the step (SLURM_NODEID)");
  sub->add_option("--local-id", opts->local_id, "The task's index on this node (SLURM_LOCALID)");
  sub->add_option("--nodelist", opts->nodelist,
                  "The step's node list (default $SLURM_STEP_NODELIST or this host)");
  sub->add_option("--node-name", opts->node_name, "This node's name, for %n in plugstack paths");
  sub->add_option("--root", opts->root,
                  "Read the Neuron topology under DIR instead of plugstack.conf's root=");
  sub->add_option("--plugstack", opts->plugstack, "plugstack.conf to take the site settings from");
  sub->add_option("--trn-env", opts->trn_env, "on|off, as for srun");
  sub->add_option("--trn-cores", opts->trn_cores, "per-node|per-task|N, as for srun");
  sub->add_option("--trn-efa", opts->trn_efa, "auto|on|off, as for srun");
  sub->add_option("--trn-cache", opts->trn_cache, "DIR, as for srun");
  sub->add_option("--trn-launch", opts->trn_launch, "torchrun|auto, as for srun");
  sub->add_option("--trn-root-comm", opts->trn_root_comm, "[PORT], as for srun")
      ->expected(0, 1)
      ->default_str("");
  sub->add_flag("--explain", opts->explain, "Say why each variable is set or left alone");
  sub->add_flag("--json", opts->json,
                "Print JSON: the variables set and kept (name, value, reason), notes, site settings");
  sub->add_flag("--probe-efa", opts->probe_efa,
                "Ask libfabric now instead of reading the slurmd's probe result");
  sub->add_flag("--ignore-env", opts->ignore_env, "Ignore your own environment (show the plugin's values)");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
