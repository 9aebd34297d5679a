#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// How NeuronCores are shared out on a node (--trn-cores).
enum class CoreMode {
  automatic,  // per-node when the node runs one task of the step, per-task otherwise
  per_node,   // one task per node (torchrun) gets every core
  per_task,   // the node's cores split evenly between its tasks
  fixed,      // every task gets `cores_per_task` cores
};

// Whether to set the FI_* variables for EFA (--trn-efa).
enum class EfaMode { automatic, on, off };

// How the step's tasks start the training processes (--trn-launch). `torchrun`: the node's one
// task is torchrun starting every worker of the node on the native PyTorch runtime (TorchNeuron,
// the TorchTitan Neuron track): the plugin sets per-node settings only, nothing that pins every
// worker to the task's cores, and no setting the new runtime has retired (docs/plugin.md).
enum class LaunchMode { automatic, torchrun };

// Where the compile cache of each host goes: one shared directory, or one per host under it.
enum class CacheMode { shared, per_host };

// Everything that decides what a task gets, after plugstack defaults and srun/#SBATCH options
// have been merged (options win). The user's own environment wins over both; that happens in
// task_environment().
struct EnvSettings {
  bool enabled = true;  // --trn-env=off touches nothing
  bool verbose = false;
  CoreMode cores = CoreMode::automatic;
  std::uint32_t cores_per_task = 0;  // with CoreMode::fixed
  EfaMode efa = EfaMode::automatic;
  std::string cache = "/var/tmp/neuron-compile-cache";
  CacheMode cache_mode = CacheMode::shared;
  std::uint16_t master_port = 44000;
  std::optional<std::uint16_t> root_comm_port;  // NEURON_RT_ROOT_COMM_ID only when asked
  std::uint16_t root_comm_default_port = 46820;
  std::optional<std::uint32_t> lnc;  // logical NeuronCore config; default: the instance type's
  std::string malloc_arena_max = "64";
  std::string inflight = "3";
  std::string stochastic_rounding = "1";
  std::string fuse_softmax = "1";
  std::optional<std::string> master_net;  // CIDR that picks MASTER_ADDR on multi-homed hosts
  bool resolve_master = true;             // master_addr=resolve|name
  LaunchMode launch = LaunchMode::automatic;
  // Neuron 2.29's runtime settings, set only where the site names them (plugstack.conf
  // one_thread_per_core=, ranks_per_network_proxy=); a recipe sets them in stages.train.env.
  std::optional<std::string> one_thread_per_core;
  std::optional<std::string> ranks_per_network_proxy;

  // Where the value of each user-settable choice came from, for the reasons printed by
  // --explain: "built-in default", "plugstack.conf" or the srun/#SBATCH option.
  std::string cores_from = "built-in default";
  std::string efa_from = "built-in default";
  std::string cache_from = "built-in default";
  std::string root_comm_from = "built-in default";
};

// Site settings from plugstack.conf: the defaults above plus where to read the node from.
struct SiteSettings {
  EnvSettings defaults;
  std::string root = "/";                   // topology root; %n = this node's name
  std::string state_dir = "/run/trnslurm";  // root-owned; the slurmd's EFA probe lands here
  std::string instances;                    // the site's instance types (docs/instances.md); "" = none
  // preflight_drain=yes: the site lets the plugin drain a node that a pre-flight step's checks,
  // re-run as root at the step's end, find broken (docs/health.md, health/drain.hpp).
  bool preflight_drain = false;
};

// The srun/#SBATCH options the user gave; each unset one falls back to the site default.
struct UserOptions {
  std::optional<bool> enabled;
  std::optional<bool> verbose;
  std::optional<CoreMode> cores;
  std::optional<std::uint32_t> cores_per_task;
  std::optional<EfaMode> efa;
  std::optional<std::string> cache;
  std::optional<std::uint16_t> root_comm_port;
  std::optional<LaunchMode> launch;
  // --trn-preflight: this step is a pre-flight (`trnslurm preflight` marks its srun). It only asks
  // for the root re-check; whether a node is drained is the site's and the checks' decision.
  bool preflight = false;
};

// Option parsers, shared by the plugin and `trnslurm env` so both refuse the same values with
// the same words. Each Error names the option in `where`.
Result<bool> parse_env_switch(std::string_view value);
struct CoreChoice {
  CoreMode mode = CoreMode::automatic;
  std::uint32_t per_task = 0;
};
Result<CoreChoice> parse_cores(std::string_view value);
Result<EfaMode> parse_efa(std::string_view value);
Result<std::string> parse_cache(std::string_view value);
Result<LaunchMode> parse_launch(std::string_view value);
// --trn-root-comm without a value asks for the default port (std::nullopt argument).
Result<std::uint16_t> parse_root_comm(std::optional<std::string_view> value, std::uint16_t default_port);

// Records one option into `opts` (name without the leading "--"). Idempotent: Slurm may call
// the option callback twice with the same value.
Result<void> apply_option(UserOptions& opts, std::string_view name, std::optional<std::string_view> value,
                          std::uint16_t default_root_comm_port);

// Plugstack.conf arguments, `key=value` each; an unknown key or a bad value is an error that
// names the plugin and the argument.
Result<SiteSettings> parse_plugstack_args(const std::vector<std::string>& args);

EnvSettings merge(const SiteSettings& site, const UserOptions& opts);

// Expands %n (this node's name) and %% in a plugstack path; any other % is refused.
Result<std::string> expand_node_pattern(std::string_view pattern, std::string_view node);

std::string_view to_string(CoreMode mode);
std::string_view to_string(EfaMode mode);
std::string_view to_string(LaunchMode mode);

}  // namespace trnslurm
