#include "trnslurm/node/task_env.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trnslurm {

namespace {

class Builder {
 public:
  explicit Builder(const EnvInput& in) : in_(in) {}

  // The user's environment wins over anything decided here.
  void add(std::string_view name, std::string value, std::string reason, bool per_task = false) {
    if (const auto it = in_.user_env.find(name); it != in_.user_env.end()) {
      plan_.kept.push_back(
          {std::string(name), it->second,
           fmt::format("already in your environment: left alone (would have been {}: {})", value, reason),
           per_task});
      return;
    }
    plan_.set.push_back({std::string(name), std::move(value), std::move(reason), per_task});
  }
  bool user_has(std::string_view name) const { return in_.user_env.contains(name); }
  void note(std::string text) { plan_.notes.push_back(std::move(text)); }
  EnvPlan take() { return std::move(plan_); }

 private:
  const EnvInput& in_;
  EnvPlan plan_;
};

std::string core_range(std::uint32_t first, std::uint32_t count) {
  if (count == 1) return std::to_string(first);
  return fmt::format("{}-{}", first, first + count - 1);
}

// The logical NeuronCore config: the user's NEURON_LOGICAL_NC_CONFIG, else the plugstack lnc=,
// else the instance type's lnc_default (docs/instances.md). A type of known LNCs refuses others.
Result<std::uint32_t> choose_lnc(const EnvInput& in, std::string& from) {
  const auto& type = in.instance.type;
  std::uint32_t lnc = type ? type->lnc_default.value.value_or(1) : 1U;
  from = type ? fmt::format("default for {}", in.instance.how) : "default for an unknown instance type";
  if (in.settings.lnc) {
    lnc = *in.settings.lnc;
    from = "plugstack.conf lnc=";
  }
  if (const auto it = in.user_env.find("NEURON_LOGICAL_NC_CONFIG"); it != in.user_env.end()) {
    if (it->second != "1" && it->second != "2")
      return fail(fmt::format("NEURON_LOGICAL_NC_CONFIG='{}' is neither 1 nor 2", it->second),
                  "NEURON_LOGICAL_NC_CONFIG", "unset it or set 1 or 2 (it must match --logical-nc-config)");
    lnc = it->second == "1" ? 1U : 2U;
    from = "your NEURON_LOGICAL_NC_CONFIG";
  }
  if (type && type->lnc.value && !type->accepts_lnc(lnc))
    return fail(fmt::format("LNC={} ({}) on a {} node, which supports only LNC={}", lnc, from,
                            in.instance.how, type->lnc_choices()),
                "NEURON_LOGICAL_NC_CONFIG", fmt::format("use LNC={}", type->lnc_choices()));
  return lnc;
}

// Whether the runtime is told the LNC: on a type that accepts more than one, or whose LNC is not
// the runtime's own 1 (trn1 knows only 1, and an unknown type is left alone).
bool tell_lnc(const EnvInput& in, std::uint32_t lnc) {
  const auto& type = in.instance.type;
  return type && type->lnc.value && (type->lnc.value->size() > 1 || lnc != 1);
}

struct ModeChoice {
  CoreMode mode;
  std::string from;
};

// auto: per-node when the node runs one task of the step (torchrun), per-task otherwise.
ModeChoice resolve_mode(const EnvInput& in) {
  if (in.settings.cores != CoreMode::automatic) return {in.settings.cores, in.settings.cores_from};
  return {in.task.local_count == 1 ? CoreMode::per_node : CoreMode::per_task,
          fmt::format("auto: {} task(s) of the step on this node", in.task.local_count)};
}

bool torchrun_step(const EnvInput& in) {
  return in.settings.launch == LaunchMode::torchrun;
}

// One rank per task, whether or not this node's cores could be assigned.
void add_ranks(const EnvInput& in, Builder& b) {
  if (torchrun_step(in)) return;  // torchrun gives each worker its RANK and LOCAL_RANK
  const auto mode = resolve_mode(in).mode;
  if (mode != CoreMode::per_task && mode != CoreMode::fixed) return;  // torchrun sets its workers' ranks
  const auto& t = in.task;
  b.add("RANK", std::to_string(t.global_id), "one rank per task: the task's global id", true);
  b.add("WORLD_SIZE", std::to_string(t.total_tasks), "tasks in the step");
  b.add("LOCAL_RANK", std::to_string(t.local_id), "the task's id on this node", true);
  b.add("LOCAL_WORLD_SIZE", std::to_string(t.local_count), "tasks of the step on this node");
}

// The logical NeuronCores of the node: the physical ones split by LNC, which is set when the
// runtime's default would differ (both launch paths).
Result<std::uint32_t> logical_cores(const EnvInput& in, std::uint32_t physical, std::uint32_t lnc,
                                    const std::string& lnc_from, Builder& b) {
  if (physical % lnc != 0)
    return fail(fmt::format("{} physical NeuronCores do not split into LNC={} logical cores", physical, lnc),
                "NEURON_LOGICAL_NC_CONFIG");
  if (tell_lnc(in, lnc))
    b.add("NEURON_LOGICAL_NC_CONFIG", std::to_string(lnc),
          fmt::format("logical NeuronCore config ({})", lnc_from));
  return physical / lnc;
}

// --trn-launch=torchrun: the node's one task is torchrun, which starts one TorchNeuron worker per
// logical core. Each worker takes its own core by its LOCAL_RANK; a node-wide
// NEURON_RT_VISIBLE_CORES would hand every worker all of them (a core is held by the process that
// opens it), so the cores are left to the runtime and only their count is given to torchrun.
Result<void> add_torchrun_cores(const EnvInput& in, Builder& b) {
  if (in.task.local_count != 1)
    return fail(fmt::format("--trn-launch=torchrun runs one torchrun per node, but this node runs {} tasks "
                            "of the step",
                            in.task.local_count),
                "--trn-launch", "use srun --ntasks-per-node=1");
  if (in.settings.cores != CoreMode::automatic)
    b.note(fmt::format("--trn-cores ({}) does not apply to a torchrun step: its workers take their cores",
                       in.settings.cores_from));
  b.note(
      "torchrun step (--trn-launch=torchrun): NEURON_RT_VISIBLE_CORES and NEURON_RT_NUM_CORES not set, "
      "each worker takes its core by LOCAL_RANK");
  if (in.topology.devices.empty()) {
    b.note(fmt::format("no Neuron device under {}: NeuronCore variables not set", in.topology.root));
    return {};
  }
  std::string lnc_from;
  const auto lnc = choose_lnc(in, lnc_from);
  if (!lnc) return std::unexpected(lnc.error());
  const auto physical = physical_cores(in.topology, in.instance);
  if (!physical) {
    b.note("NeuronCore count unknown (core_count unreadable): TRNSLURM_NPROC_PER_NODE not set");
    return {};
  }
  const auto logical = logical_cores(in, *physical, *lnc, lnc_from, b);
  if (!logical) return std::unexpected(logical.error());
  b.add("TRNSLURM_NPROC_PER_NODE", std::to_string(*logical),
        fmt::format("torchrun --nproc_per_node: one worker per logical core ({} physical, LNC={})", *physical,
                    *lnc));
  return {};
}

Result<void> add_cores(const EnvInput& in, Builder& b) {
  if (torchrun_step(in)) return add_torchrun_cores(in, b);
  const auto& s = in.settings;
  const auto& t = in.task;
  const bool explicit_mode = s.cores != CoreMode::automatic;
  if (b.user_has("NEURON_RT_VISIBLE_CORES") || b.user_has("NEURON_RT_NUM_CORES")) {
    b.note("NEURON_RT_VISIBLE_CORES/NEURON_RT_NUM_CORES come from your environment: cores not assigned");
    return {};
  }
  if (in.topology.devices.empty()) {
    if (explicit_mode)
      return fail(fmt::format("{} asks for NeuronCores, but no Neuron device was found under {}",
                              s.cores == CoreMode::fixed ? std::to_string(s.cores_per_task)
                                                         : std::string(to_string(s.cores)),
                              in.topology.root),
                  "--trn-cores", "run on a Trainium node, or drop --trn-cores");
    b.note(fmt::format("no Neuron device under {}: NeuronCore variables not set", in.topology.root));
    return {};
  }
  std::string lnc_from;
  const auto lnc = choose_lnc(in, lnc_from);
  if (!lnc) return std::unexpected(lnc.error());
  const auto physical = physical_cores(in.topology, in.instance);
  if (!physical) {
    if (explicit_mode)
      return fail(fmt::format("the NeuronCore count of this node is unknown (core_count unreadable under {})",
                              in.topology.root),
                  "--trn-cores", "check the Neuron driver (neuron-ls), or drop --trn-cores");
    b.note("NeuronCore count unknown (core_count unreadable): NeuronCore variables not set");
    return {};
  }
  const auto logical = logical_cores(in, *physical, *lnc, lnc_from, b);
  if (!logical) return std::unexpected(logical.error());
  const std::uint32_t cores = *logical;
  const std::string node_desc =
      fmt::format("{} NeuronCores on {} devices{}", cores, in.topology.devices.size(),
                  in.topology.instance_type ? " of a " + *in.topology.instance_type : std::string{});

  const auto [mode, mode_from] = resolve_mode(in);
  switch (mode) {
    case CoreMode::per_node: {
      if (t.local_count != 1)
        return fail(fmt::format("per-node gives all {} cores to one task, but this node runs {} "
                                "tasks of the step",
                                cores, t.local_count),
                    "--trn-cores",
                    "use --ntasks-per-node=1 (torchrun starts the workers) or --trn-cores=per-task");
      const std::string why = fmt::format("per-node ({}): every core of this node, {}", mode_from, node_desc);
      b.add("NEURON_RT_NUM_CORES", std::to_string(cores), why);
      b.add("NEURON_RT_VISIBLE_CORES", core_range(0, cores), why);
      b.add("TRNSLURM_NPROC_PER_NODE", std::to_string(cores),
            "torchrun --nproc_per_node: one worker per core");
      return {};
    }
    case CoreMode::per_task:
    case CoreMode::fixed: {
      const std::uint32_t per = mode == CoreMode::fixed ? s.cores_per_task : cores / t.local_count;
      const std::uint64_t wanted = std::uint64_t{per} * t.local_count;
      if (per == 0 || wanted > cores)
        return fail(fmt::format("{} tasks x {} cores per task need {} NeuronCores, but this node has {}",
                                t.local_count, per == 0 ? 1 : per, per == 0 ? t.local_count : wanted, cores),
                    "--trn-cores", "run fewer tasks per node or give each fewer cores (--trn-cores=N)");
      const std::string why =
          fmt::format("{} ({}): local task {} of {} gets {} of the {}",
                      mode == CoreMode::fixed ? fmt::format("{} cores per task", per) : "per-task", mode_from,
                      t.local_id, t.local_count, per, node_desc);
      b.add("NEURON_RT_VISIBLE_CORES", core_range(t.local_id * per, per), why, true);
      b.add("NEURON_RT_NUM_CORES", std::to_string(per), why);
      return {};
    }
    case CoreMode::automatic:
      break;
  }
  return {};
}

void add_efa(const EnvInput& in, Builder& b) {
  const auto& s = in.settings;
  std::string why;
  switch (s.efa) {
    case EfaMode::off:
      b.note(fmt::format("EFA off ({}): FI_* left alone", s.efa_from));
      return;
    case EfaMode::on:
      why = fmt::format("EFA forced on ({})", s.efa_from);
      break;
    case EfaMode::automatic:
      if (in.efa.state != EfaState::present) {
        b.note(
            fmt::format("no efa provider ({}: {}): FI_* left alone", to_string(in.efa.state), in.efa.detail));
        return;
      }
      why = fmt::format("the node's efa provider ({})", in.efa.detail);
      break;
  }
  b.add("FI_PROVIDER", "efa", why);
  b.add("FI_EFA_USE_DEVICE_RDMA", "1", why);
  b.add("FI_EFA_FORK_SAFE", "1", why + "; workers fork (data loaders)");
}

void add_rendezvous(const EnvInput& in, Builder& b) {
  const auto& s = in.settings;
  const auto& t = in.task;
  b.add("MASTER_ADDR", in.master.address, fmt::format("first node of the step, {}", in.master.how));
  b.add("MASTER_PORT", std::to_string(s.master_port), "plugstack master_port (default 44000)");
  if (s.root_comm_port)
    b.add("NEURON_RT_ROOT_COMM_ID", fmt::format("{}:{}", in.master.address, *s.root_comm_port),
          fmt::format("asked for by {}: the master address and port", s.root_comm_from));
  b.add("TRNSLURM_NODE_RANK", std::to_string(t.node_id),
        fmt::format("node {} of the step's {} nodes (torchrun --node_rank)", t.node_id, t.nnodes));
  b.add("TRNSLURM_NNODES", std::to_string(t.nnodes), "nodes in the step (torchrun --nnodes)");
}

void add_runtime(const EnvInput& in, Builder& b) {
  const auto& s = in.settings;
  b.add("MALLOC_ARENA_MAX", s.malloc_arena_max,
        "caps glibc arenas: host OOM otherwise (plugstack malloc_arena_max)");
  // Only warned about from Neuron 2.30 on (its release notes): the TorchNeuron track leaves it out.
  if (torchrun_step(in))
    b.note(
        "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS not set: retired for the TorchNeuron runtime (torchrun "
        "step)");
  else
    b.add("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", s.inflight,
          "runtime default (plugstack inflight; >3 may OOM)");
  if (s.one_thread_per_core)
    b.add("NEURON_RT_ONE_THREAD_PER_CORE", *s.one_thread_per_core,
          "the site's setting (plugstack one_thread_per_core; Neuron runtime 2.29)");
  if (s.ranks_per_network_proxy)
    b.add("NEURON_RT_RANKS_PER_NETWORK_PROXY", *s.ranks_per_network_proxy,
          "the site's setting (plugstack ranks_per_network_proxy; Neuron runtime 2.29)");
  b.add("NEURON_RT_STOCHASTIC_ROUNDING_EN", s.stochastic_rounding,
        "runtime default (plugstack stochastic_rounding)");
  b.add("NEURON_FUSE_SOFTMAX", s.fuse_softmax, "runtime default (plugstack fuse_softmax)");
  if (s.cache_mode == CacheMode::per_host)
    b.add("NEURON_COMPILE_CACHE_URL", s.cache + "/" + in.hostname,
          fmt::format("compile cache ({}), one per host (plugstack cache_mode=per-host)", s.cache_from));
  else
    b.add("NEURON_COMPILE_CACHE_URL", s.cache,
          fmt::format("compile cache ({}), shared by every host", s.cache_from));
}

std::string value_hash(std::string_view value) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : value) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

std::string set_mark(const std::vector<EnvVar>& set) {
  std::string out;
  for (const auto& v : set) {
    if (!out.empty()) out += ',';
    out += v.name + ':' + value_hash(v.value);
  }
  return out;
}

void separate_inherited(EnvInput& in, std::string_view mark) {
  while (!mark.empty()) {
    const auto comma = mark.find(',');
    const auto entry = mark.substr(0, comma);
    mark = comma == std::string_view::npos ? std::string_view{} : mark.substr(comma + 1);
    const auto colon = entry.find(':');
    if (colon == std::string_view::npos) continue;
    const auto it = in.user_env.find(entry.substr(0, colon));
    if (it == in.user_env.end() || value_hash(it->second) != entry.substr(colon + 1)) continue;
    in.inherited.push_back(it->first);
    in.user_env.erase(it);
  }
}

const std::vector<std::string_view>& considered_variables() {
  static const std::vector<std::string_view> names{"NEURON_LOGICAL_NC_CONFIG",
                                                   "NEURON_RT_NUM_CORES",
                                                   "NEURON_RT_VISIBLE_CORES",
                                                   "TRNSLURM_NPROC_PER_NODE",
                                                   "RANK",
                                                   "WORLD_SIZE",
                                                   "LOCAL_RANK",
                                                   "LOCAL_WORLD_SIZE",
                                                   "FI_PROVIDER",
                                                   "FI_EFA_USE_DEVICE_RDMA",
                                                   "FI_EFA_FORK_SAFE",
                                                   "MASTER_ADDR",
                                                   "MASTER_PORT",
                                                   "NEURON_RT_ROOT_COMM_ID",
                                                   "TRNSLURM_NODE_RANK",
                                                   "TRNSLURM_NNODES",
                                                   "MALLOC_ARENA_MAX",
                                                   "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS",
                                                   "NEURON_RT_ONE_THREAD_PER_CORE",
                                                   "NEURON_RT_RANKS_PER_NETWORK_PROXY",
                                                   "NEURON_RT_STOCHASTIC_ROUNDING_EN",
                                                   "NEURON_FUSE_SOFTMAX",
                                                   "NEURON_COMPILE_CACHE_URL"};
  return names;
}

Result<EnvPlan> task_environment(const EnvInput& in) {
  Builder b(in);
  if (!in.settings.enabled) {
    b.note("--trn-env=off: nothing set");
    return b.take();
  }
  if (auto ok = add_cores(in, b); !ok) return std::unexpected(ok.error());
  add_ranks(in, b);
  add_efa(in, b);
  add_rendezvous(in, b);
  add_runtime(in, b);
  if (!in.inherited.empty())
    b.note(fmt::format("{} came from the step this one was started from ({}): decided again",
                       fmt::join(in.inherited, ", "), set_mark_variable));
  auto plan = b.take();
  if (!plan.set.empty())
    plan.set.push_back({std::string(set_mark_variable), set_mark(plan.set),
                        "what trnslurm set, so that a step started from this task decides them again", true});
  return plan;
}

}  // namespace trnslurm
