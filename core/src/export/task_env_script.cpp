#include "trnslurm/export/task_env_script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "trnslurm/node/task_env.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {
namespace {

// What the entry point knows only when it runs, by the name task_environment() gives it. The
// decision is taken with these placeholders as values and each is replaced by its variable.
constexpr std::string_view main_addr = "@TRN_MAIN_ADDR@";
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> runtime{{
    {"MASTER_ADDR", "\"$TRN_MAIN_ADDR\""},
    {"TRNSLURM_NODE_RANK", "\"$TRN_NODE_INDEX\""},
    {"TRNSLURM_NNODES", "\"$TRN_NUM_NODES\""},
}};

// One node of `type` as its sysfs would show it: every device with the type's cores.
Topology topology_of(const InstanceType& type) {
  Topology t;
  t.root = "the instance table";
  t.instance_type = type.name;
  const auto devices = type.cpu() ? 0U : type.devices.value.value_or(0);
  for (std::uint32_t i = 0; i < devices; ++i)
    t.devices.push_back(NeuronDevice{i, type.cores_per_device.value, std::nullopt, std::nullopt, true});
  return t;
}

std::string one_line(std::string_view text) {
  std::string out(text);
  std::ranges::replace(out, '\n', ' ');
  return out;
}

Result<std::string> launch_case(const InstanceType& type, EnvSettings settings, LaunchMode launch) {
  settings.launch = launch;
  EnvInput in;
  in.task = TaskContext{0, 2, 0, 1, 0, 2};  // one task per node; the node's place is filled in when it runs
  in.settings = std::move(settings);
  in.topology = topology_of(type);
  in.instance = NodeInstance{type, false, fmt::format("{} (the recipe's instance type)", type.name)};
  const bool efa = !type.cpu() && type.efa_devices.value.value_or(0) > 0;
  in.efa = EfaProbe{
      efa ? EfaState::present : EfaState::absent,
      efa ? fmt::format("{} EFA devices of {} in the job definition", *type.efa_devices.value, type.name)
          : fmt::format("{} has no EFA device in the instance table", type.name)};
  in.master = Rendezvous{"", std::string(main_addr), "the main node's address (the entry point)"};
  auto plan = task_environment(in);
  if (!plan) return std::unexpected(plan.error());
  std::string out;
  for (const auto& v : plan->set) {
    if (v.name == set_mark_variable) continue;  // no step is started from an exported one
    std::string value;
    std::string reason = one_line(v.reason);
    if (const auto* r =
            std::ranges::find(runtime, v.name, &std::pair<std::string_view, std::string_view>::first);
        r != runtime.end()) {
      value = r->second;
      reason = "the node's place in the job, from what the scheduler tells it (entry.sh)";
    } else if (v.value.find(main_addr) != std::string::npos) {
      // NEURON_RT_ROOT_COMM_ID: the main node's address and a port.
      auto port = shell_quote(v.value.substr(v.value.find(main_addr) + main_addr.size()));
      if (!port) return std::unexpected(port.error());
      value = "\"$TRN_MAIN_ADDR\"" + *port;
    } else {
      auto quoted = shell_quote(v.value);
      if (!quoted) return std::unexpected(quoted.error());
      value = *quoted;
    }
    out += fmt::format("      # {}\n      [ -n \"${{{}+set}}\" ] || export {}={}\n", reason, v.name, v.name,
                       value);
  }
  for (const auto& note : plan->notes) out += fmt::format("      # not set: {}\n", one_line(note));
  return out;
}

}  // namespace

const std::vector<std::string_view>& exported_srun_options() {
  static const std::vector<std::string_view> options{"--ntasks-per-node=1", "--kill-on-bad-exit",
                                                     "--kill-on-bad-exit=1", "--trn-launch=torchrun"};
  return options;
}

Result<std::string> task_env_script(const InstanceType& type, const EnvSettings& settings) {
  auto plain = launch_case(type, settings, LaunchMode::automatic);
  if (!plain) return std::unexpected(plain.error());
  auto torchrun = launch_case(type, settings, LaunchMode::torchrun);
  if (!torchrun) return std::unexpected(torchrun.error());
  std::string options;
  for (const auto o : exported_srun_options()) options += fmt::format("{}{}", options.empty() ? "" : " ", o);
  return fmt::format(
      "# shellcheck shell=bash\n"
      "# What the trnslurm plugin would set on a {} node (docs/export.md): task_environment()'s\n"
      "# decision, taken by `trnslurm export` with the plugin's built-in defaults (no plugstack.conf).\n"
      "# Sourced by entry.sh. A variable already in the environment is left alone, as the plugin does.\n"
      "export TRN_SRUN_OPTIONS='{}'\n"
      "trn_task_env() {{\n"
      "  case $1 in\n"
      "    torchrun)\n"
      "{}"
      "      ;;\n"
      "    *)\n"
      "{}"
      "      ;;\n"
      "  esac\n"
      "}}\n",
      type.name, options, *torchrun, *plain);
}

}  // namespace trnslurm
