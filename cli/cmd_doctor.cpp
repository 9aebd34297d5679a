// `trnslurm doctor`: on a node, what the plugin will find there. Prints one line per check
// (ok / warn / FAIL) and exits 1 when something would stop the plugin from doing its job.
extern "C" {
#include <slurm/slurm.h>
}

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "colour.hpp"
#include "commands.hpp"
#include "site_config.hpp"
#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/node/topology.hpp"
#include "trnslurm/util/elf_symbol.hpp"
#include "trnslurm/version.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  std::optional<std::string> plugstack;
  std::optional<std::string> node_name;
  bool no_probe = false;
  bool json = false;
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

std::string major_minor(std::uint32_t v) {
  return fmt::format("{}.{:02}", (v >> 16) & 0xff, (v >> 8) & 0xff);
}

std::string major_minor(const std::string& dotted) {
  const auto second = dotted.find('.', dotted.find('.') + 1);
  return second == std::string::npos ? dotted : dotted.substr(0, second);
}

// slurmctld's own version (an RPC), or nullopt when it cannot be reached.
std::optional<std::string> controller_version(const std::string& slurm_conf) {
  slurm_init(slurm_conf.c_str());
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) return std::nullopt;
  std::optional<std::string> v;
  if (conf->version) v = conf->version;
  slurm_free_ctl_conf(conf);
  return v;
}

void check_slurm(Report& r, const SiteConfig& cfg) {
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

  const auto plugin_v = read_u32_symbol(line.path, "plugin_version");
  if (!plugin_v) {
    r.bad("plugin", to_string(plugin_v.error()));
    return;
  }
  const std::string built_for = major_minor(*plugin_v);
  const auto running = controller_version(cfg.slurm_conf);
  if (!running) {
    r.warn("version",
           fmt::format("plugin built for Slurm {}; slurmctld not reachable to compare", built_for));
  } else if (major_minor(*running) != built_for) {
    r.bad("version", fmt::format("plugin built for Slurm {}, slurmctld runs {}: Slurm refuses to load it "
                                 "(rebuild against this Slurm)",
                                 built_for, *running));
  } else {
    r.ok("version", fmt::format("plugin built for Slurm {}, slurmctld runs {}", built_for, *running));
  }
  if (major_minor(std::string(slurm_build_version)) != built_for)
    r.warn("version", fmt::format("this trnslurm was built against Slurm {}, the plugin for {}",
                                  slurm_build_version, built_for));
}

// The node against the instance table: the type known, and its devices as the table says.
void check_instance(Report& r, const Topology& t, const NodeInstance& instance,
                    const std::string& site_file) {
  if (!site_file.empty()) r.ok("instances", fmt::format("site types from {}", site_file));
  if (!instance.type) {
    r.warn("instances", fmt::format("{}: LNC defaults to 1 and is not checked; add the type to the site's "
                                    "instances file (docs/instances.md)",
                                    instance.how));
    return;
  }
  r.ok("instances", instance.how);
  const auto& type = *instance.type;
  if (!t.devices.empty() && !instance.by_device && type.devices.value &&
      *type.devices.value != t.devices.size())
    r.warn("instances", fmt::format("{} devices here, the table says {} for {}", t.devices.size(),
                                    *type.devices.value, type.name));
  if (type.cores_per_device.value)
    for (const auto& d : t.devices)
      if (d.core_count && *d.core_count != *type.cores_per_device.value) {
        r.warn("instances", fmt::format("neuron{} has {} cores, the table says {} per device", d.index,
                                        *d.core_count, *type.cores_per_device.value));
        break;
      }
  for (const auto& u : unconfirmed_figures(type, {"devices", "cores_per_device", "lnc", "lnc_default"}))
    r.info("instances", "unconfirmed: " + u);
}

void check_topology(Report& r, const SiteSettings& site, const std::string& node) {
  const auto root = expand_node_pattern(site.root, node);
  if (!root) {
    r.bad("topology", to_string(root.error()));
    return;
  }
  const auto t = read_topology(*root);
  r.info("root", *root);
  r.info("instance", t.instance_type ? *t.instance_type : "unknown (no DMI product_name)");
  const auto instances = expand_node_pattern(site.instances, node);
  if (!instances) {
    r.bad("instances", to_string(instances.error()));
    return;
  }
  auto found = read_node_instance(t, *instances);
  if (!found) {
    r.bad("instances", to_string(found.error()) + ": every step on this node fails until it is fixed");
    return;
  }
  const NodeInstance& instance = *found;
  check_instance(r, t, instance, *instances);
  if (t.devices.empty()) {
    r.warn("neuron", fmt::format("no Neuron device under {}/sys/devices/virtual/neuron_device: NeuronCore "
                                 "variables will not be set",
                                 *root == "/" ? "" : *root));
    return;
  }
  std::size_t dev_nodes = 0, unknown_cores = 0;
  for (const auto& d : t.devices) {
    dev_nodes += d.dev_node ? 1U : 0U;
    unknown_cores += d.core_count ? 0U : 1U;
  }
  const auto cores = physical_cores(t, instance);
  r.ok("neuron", fmt::format("{} devices, {} physical NeuronCores, /dev/neuron* for {} of them",
                             t.devices.size(), cores ? std::to_string(*cores) : "unknown", dev_nodes));
  if (unknown_cores) r.warn("neuron", fmt::format("{} devices without a readable core_count", unknown_cores));
  if (dev_nodes != t.devices.size())
    r.warn("neuron", "some devices have no /dev/neuron<N>: is the driver loaded?");
  if (instance.type && instance.type->lnc.value && cores) {
    const auto lnc = site.defaults.lnc.value_or(instance.type->lnc_default.value.value_or(1));
    if (!instance.type->accepts_lnc(lnc))
      r.bad("lnc", fmt::format("plugstack lnc={} but {} supports LNC={}: every step fails", lnc, instance.how,
                               instance.type->lnc_choices()));
    else
      r.info("lnc", fmt::format("{} logical cores at LNC={} ({} accepts {})", *cores / lnc, lnc, instance.how,
                                instance.type->lnc_choices()));
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

int run(const Options& a) {
  Report r(a.json);
  const auto cfg = load_site_config(a.plugstack);
  const std::string node = a.node_name.value_or(node_name());
  if (!a.json)
    fmt::print("trnslurm doctor on {} (trnslurm {}, built against Slurm {})\n", node, version,
               slurm_build_version);
  check_slurm(r, cfg);
  const SiteSettings site = cfg.site ? *cfg.site : SiteSettings{};
  check_topology(r, site, node);
  check_efa(r, site, node, !a.no_probe);
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
      app.add_subcommand("doctor", "Check this node: Neuron topology, EFA, the plugin in plugstack.conf");
  sub->footer(
      "Exit status 0 when the plugin can do its job here, 1 when something stops it.\n"
      "Examples:\n"
      "  trnslurm doctor\n"
      "  srun -N 4 --ntasks-per-node=1 trnslurm doctor --no-probe   # every node of an allocation\n"
      "  trnslurm doctor --json | jq '.checks[] | select(.status == \"FAIL\")'");
  sub->add_option("--plugstack", opts->plugstack,
                  "plugstack.conf to check (default: slurm.conf's PlugStackConfig)");
  sub->add_option("--node-name", opts->node_name, "This node's name, for %n in plugstack paths");
  sub->add_flag("--no-probe", opts->no_probe,
                "Do not load libfabric now (only read the slurmd's saved answer)");
  sub->add_flag("--json", opts->json,
                "Print JSON: node, versions, ok, and every check (status, check, detail)");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
