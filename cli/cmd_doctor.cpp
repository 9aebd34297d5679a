// `trnslurm doctor`: on a node, what the plugin will find there. Prints one line per check
// (ok / warn / FAIL) and exits 1 when something would stop the plugin from doing its job.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "colour.hpp"
#include "commands.hpp"
#include "doctor_cluster.hpp"
#include "node_health.hpp"
#include "process.hpp"
#include "recipe_options.hpp"
#include "site_config.hpp"
#include "trainer_help.hpp"
#include "trnslurm/chain/plugin_version.hpp"
#include "trnslurm/health/node_checks.hpp"
#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/node/topology.hpp"
#include "trnslurm/version.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  std::optional<std::string> plugstack;
  std::optional<std::string> node_name;
  bool no_probe = false;
  bool json = false;
  NodeHealthOptions health;
  bool cluster = false;
  ClusterDoctorOptions on;            // --cluster: which nodes
  std::optional<std::string> recipe;  // --recipe: also ask its installed trainer about its flags
};

// Prints each check as it is made, or with --json keeps them for one document at the end.
class Report {
 public:
  explicit Report(bool json) : json_(json), colour_(!json && colour_enabled(stdout)) {}
  void ok(const std::string& what, const std::string& detail) { line("ok", what, detail); }
  void warn(const std::string& what, const std::string& detail) { line("warn", what, detail); }
  void bad(const std::string& what, const std::string& detail) {
    line("FAIL", what, detail);
    failed_ = true;
  }
  void info(const std::string& what, const std::string& detail) { line("", what, detail); }
  bool failed() const { return failed_; }
  const nlohmann::json& checks() const { return checks_; }

 private:
  void line(std::string_view tag, const std::string& what, const std::string& detail) {
    if (json_) {
      checks_.push_back({{"status", tag.empty() ? "info" : tag}, {"check", what}, {"detail", detail}});
      return;
    }
    const auto padded = fmt::format("{:<4}", tag);
    fmt::print("{} {:<10} {}\n", paint(tag, state_colour(tag), colour_) + padded.substr(tag.size()), what,
               detail);
  }
  bool json_;
  bool colour_;
  bool failed_ = false;
  nlohmann::json checks_ = nlohmann::json::array();
};

void print(Report& r, const health::Finding& f) {
  switch (f.status) {
    case health::Status::ok:
      r.ok(f.check, f.detail);
      break;
    case health::Status::warn:
      r.warn(f.check, f.detail);
      break;
    case health::Status::fail:
      r.bad(f.check, f.detail);
      break;
  }
}

void check_slurm(Report& r, const SiteConfig& cfg, SlurmClient& slurm) {
  if (!cfg.slurm_conf_found) {
    r.bad("slurm", fmt::format("no {} (set SLURM_CONF)", cfg.slurm_conf));
    return;
  }
  r.ok("slurm", cfg.slurm_conf);
  if (!cfg.plugstack_found) {
    r.bad("plugstack", fmt::format("{} not found", cfg.plugstack));
    return;
  }
  if (!cfg.line) {
    r.bad("plugstack", fmt::format("no trnslurm.so line in {}", fmt::join(cfg.files_read, ", ")));
    return;
  }
  const auto& line = *cfg.line;
  r.ok("plugstack",
       fmt::format("{}:{}: {} {} {}", line.file, line.line, line.required ? "required" : "optional",
                   line.path, fmt::join(line.args, " ")));
  if (!line.required)
    r.warn("plugstack", "optional: if the plugin fails to load, jobs run without their environment");
  if (!cfg.site)
    r.bad("arguments", to_string(cfg.site.error()));
  else
    r.ok("arguments", "parsed");

  for (const auto& f : check_plugin_version(line.path, slurm, slurm_build_version)) print(r, f);
}

// The node's checks (the core's health checks, as the pre-flight runs them), with what the plugin
// makes of the node around them: its tree, type and LNC.
void check_node(Report& r, const SiteSettings& site, const std::string& node,
                const NodeHealthOptions& options) {
  const auto in = node_check_inputs(site, node, options);
  if (!in) {
    r.bad("topology", to_string(in.error()));
    return;
  }
  const auto t = read_topology(in->root);
  r.info("root", in->root.string());
  r.info("instance", t.instance_type ? *t.instance_type : "unknown (no DMI product_name)");
  if (!in->site_instances.empty()) r.ok("instances", fmt::format("site types from {}", in->site_instances));
  const auto findings = health::run_node_checks(*in);
  if (!findings) {
    r.bad("instances", to_string(findings.error()) + ": every step on this node fails until it is fixed");
    return;
  }
  for (const auto& f : *findings) print(r, f);
  const auto instance = read_node_instance(t, in->site_instances);
  if (!instance || !instance->type) return;
  for (const auto& u :
       unconfirmed_figures(*instance->type, {"devices", "cores_per_device", "lnc", "lnc_default"}))
    r.info("instances", "unconfirmed: " + u);
  const auto cores = physical_cores(t, *instance);
  if (instance->type->lnc.value && cores) {
    const auto lnc = site.defaults.lnc.value_or(instance->type->lnc_default.value.value_or(1));
    if (!instance->type->accepts_lnc(lnc))
      r.bad("lnc", fmt::format("plugstack lnc={} but {} supports LNC={}: every step fails", lnc,
                               instance->how, instance->type->lnc_choices()));
    else
      r.info("lnc", fmt::format("{} logical cores at LNC={} ({} accepts {})", *cores / lnc, lnc,
                                instance->how, instance->type->lnc_choices()));
  }
}

void check_efa(Report& r, const SiteSettings& site, const std::string& node, bool probe) {
  const auto dir = expand_node_pattern(site.state_dir, node);
  if (!dir) {
    r.bad("efa", to_string(dir.error()));
    return;
  }
  const auto saved = read_efa_state(*dir);
  if (saved)
    r.ok("efa",
         fmt::format("slurmd's probe: {} ({}), in {}/efa", to_string(saved->state), saved->detail, *dir));
  else
    r.warn("efa", fmt::format("{}: steps leave FI_* alone until slurmd restarts with the plugin",
                              to_string(saved.error())));
  if (!probe) return;
  const auto now = probe_efa();
  r.info("efa", fmt::format("libfabric now: {} ({})", to_string(now.state), now.detail));
  if (saved && saved->state != now.state)
    r.warn("efa", "the saved answer is stale: restart slurmd to probe again");
}

// The recipe's train stage against the trainer installed in its venv (docs/upstream.md): TorchTitan
// moves faster than the interface record, and the record cannot know the fork's own changes.
void check_trainer(Report& r, const std::string& path) {
  RecipeOptions options;
  options.path = path;
  auto recipe = options.load();
  if (!recipe) {
    r.bad("recipe", to_string(recipe.error()));
    return;
  }
  auto checked = check_installed_trainer(*recipe);
  if (!checked) {
    r.bad("installed trainer", to_string(checked.error()));
  } else if (!checked->asked) {
    r.info("installed trainer", "the recipe runs no TorchTitan train script: nothing to ask");
  } else if (!checked->not_listed.empty()) {
    r.bad("installed trainer",
          fmt::format("its --help (asked on {}) lists none of {}: it would refuse the train stage (exit 2)",
                      checked->where, fmt::join(checked->not_listed, ", ")));
  } else {
    r.ok("installed trainer",
         fmt::format("every flag of the train stage is in its --help (asked on {})", checked->where));
  }
}

int run(const Options& a) {
  if (a.cluster) {
    auto c = a.on;
    c.json = a.json;
    c.health = a.health;
    return run_cluster_doctor(c);
  }
  Report r(a.json);
  const auto cfg = load_site_config(a.plugstack);
  const std::string node = a.node_name.value_or(node_name());
  if (!a.json)
    fmt::print("trnslurm doctor on {} (trnslurm {}, built against Slurm {})\n", node, version,
               slurm_build_version);
  auto slurm = slurm_client();
  check_slurm(r, cfg, slurm);
  const SiteSettings site = cfg.site ? *cfg.site : SiteSettings{};
  auto health = a.health;
  health.probe = !a.no_probe;
  check_node(r, site, node, health);
  check_efa(r, site, node, !a.no_probe);
  if (a.recipe) check_trainer(r, *a.recipe);
  if (a.json) {
    const nlohmann::json j{{"node", node},
                           {"version", version},
                           {"slurm_build_version", slurm_build_version},
                           {"ok", !r.failed()},
                           {"checks", r.checks()}};
    fmt::print("{}\n", j.dump(2));
  }
  return r.failed() ? exit_failure : exit_ok;
}

}  // namespace

Command add_doctor(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("doctor",
                         "Check this node (or --cluster: many nodes): Neuron devices and errors, EFA, "
                         "limits, the plugin in plugstack.conf");
  sub->footer(
      "Exit status 0 when the plugin can do its job here (with --cluster: when every node passes), 1 when\n"
      "something stops it, 2 on bad options. Checks and what each FAILs on: docs/health.md.\n"
      "Examples:\n"
      "  trnslurm doctor\n"
      "  trnslurm doctor --cluster                  # every usable node of the default partition\n"
      "  trnslurm doctor --cluster --partition trn1 --nodes 16   # one short job, one row per node\n"
      "  trnslurm doctor --cluster --nodelist 'n[1-3]' --checks errors,topology --json\n"
      "  srun -N 4 --ntasks-per-node=1 trnslurm doctor --no-probe   # every node of an allocation\n"
      "  trnslurm doctor --json | jq '.checks[] | select(.status == \"FAIL\")'");
  sub->add_option("--plugstack", opts->plugstack,
                  "plugstack.conf to check (default: slurm.conf's PlugStackConfig)");
  sub->add_option("--node-name", opts->node_name, "This node's name, for %n in plugstack paths");
  sub->add_flag("--no-probe", opts->no_probe,
                "Do not load libfabric now (only read the slurmd's saved answer)");
  add_node_health_options(*sub, opts->health);
  sub->add_option(
      "--recipe,-r", opts->recipe,
      "Also ask this recipe's installed trainer (its venv, on a compute node) whether it takes the "
      "train stage's flags");
  sub->add_flag("--cluster", opts->cluster, "Check many nodes as one short Slurm job: one row per node");
  sub->add_option("--partition,-p", opts->on.partition, "With --cluster: the partition to run on");
  sub->add_option("--nodes,-N", opts->on.nodes,
                  "With --cluster: how many nodes (default: every usable node of the partition)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--nodelist,-w", opts->on.nodelist, "With --cluster: these nodes (a Slurm node list)");
  sub->add_flag("--json", opts->json,
                "Print JSON: node, versions, ok, and every check (status, check, detail)");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
