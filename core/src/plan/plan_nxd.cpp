// neuronx-distributed's data and batch rule (the legacy track: Neuron 2.28): steps as its example
// trainers' loop counts them, what its checkpoint converter refuses, warmup as its scripts take
// it, and ZeRO-1 memory. Sources: docs/plan.md, "The NxD rule".
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "trnslurm/plan/trainer_rule.hpp"
#include "trnslurm/util/checked.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

Result<DatasetSize> dataset_size_from_tokens(std::uint64_t tokens, std::uint64_t seq_len) {
  if (seq_len == 0) return fail("seq_len is 0", "model.seq_len", "set model.seq_len");
  if (tokens <= seq_len)
    return fail(
        fmt::format("the dataset holds {} tokens, not enough for one sequence of {}", tokens, seq_len),
        "dataset", "use a larger dataset or a shorter model.seq_len");
  DatasetSize size;
  size.samples = (tokens - 1) / seq_len;
  size.tokens = tokens;
  size.format = "megatron";
  return size;
}

MemoryEstimate estimate_memory(const ModelRecipe& m, std::uint32_t tp, std::uint32_t pp, std::uint64_t dp,
                               std::uint64_t mbs, std::uint64_t grad_accum, std::uint64_t capacity) {
  using u64 = std::uint64_t;
  constexpr auto mul = saturating_mul;
  constexpr auto add = saturating_add;
  dp = std::max<u64>(dp, 1);
  pp = std::max<std::uint32_t>(pp, 1);
  const auto params = count_parameters(m, tp, pp);
  MemoryEstimate e;
  e.parameters = params.total;
  e.parameters_per_core = params.per_core;
  // Mixed precision with ZeRO-1 (Rajbhandari et al. 2020, §3): bf16 weights and gradients on
  // every DP rank, fp32 master weights + Adam m and v (12 bytes/parameter) sharded over DP.
  e.weights = mul(2, e.parameters_per_core);
  e.gradients = mul(2, e.parameters_per_core);
  const u64 optimizer_total = mul(12, e.parameters_per_core);
  e.optimizer = optimizer_total / dp + (optimizer_total % dp != 0 ? 1 : 0);
  e.sharded_over = dp;
  // The recipes pass --selective_checkpoint_enabled; 1F1B keeps up to PP micro-batches in flight
  // on the first stage.
  const u64 in_flight = pp == 1 ? 1 : std::min<u64>(pp, std::max<u64>(grad_accum, 1));
  e.activations = activation_bytes(m, tp, pp, 1, mbs, in_flight, Recompute::selective);
  e.total = add(add(e.weights, e.gradients), add(e.optimizer, e.activations));
  e.capacity = capacity;
  return e;
}

namespace {

// `--qkv_linear` with any non-empty value: the converter declares it `type=bool`, so "0" and
// "False" are true as well.
bool passes_qkv_linear(const StageRecipe& stage) {
  for (std::size_t i = 0; i < stage.args.size(); ++i) {
    const auto& w = stage.args[i].text;
    if (w.starts_with("--qkv_linear=")) return w.size() > std::string_view("--qkv_linear=").size();
    if (w == "--qkv_linear") return i + 1 < stage.args.size() && !stage.args[i + 1].text.empty();
  }
  return false;
}

// "2.29" -> 229; nullopt for anything else.
std::optional<unsigned> release_number(std::string_view release) {
  const auto dot = release.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = parse_number<unsigned>(release.substr(0, dot));
  const auto minor = parse_number<unsigned>(release.substr(dot + 1));
  if (!major || !minor) return std::nullopt;
  return *major * 100 + *minor;
}

class NxdRule final : public TrainerRule {
 public:
  Result<DatasetSize> from_tokens(std::uint64_t tokens, std::uint64_t seq_len) const override {
    return dataset_size_from_tokens(tokens, seq_len);
  }

  Result<PlanSteps> steps(const ParallelConfig& c, const ModelRecipe& m, std::uint64_t samples,
                          std::string_view instance) const override {
    PlanSteps s;
    if (c.nodes == 0 || c.tp == 0 || c.pp == 0 || c.mbs == 0 || c.gbs == 0 || c.epochs == 0)
      return fail("nodes, tp, pp, gbs, mbs and epochs must be at least 1", "train.tp",
                  "check the [cluster] and [train] sections");
    if (samples == 0)
      return fail("the dataset holds no samples", "dataset.path", "point dataset.path at the training data");

    // TP must divide the cores of a node (a TP group never spans nodes) and the attention heads.
    if (c.cores_per_node % c.tp != 0)
      return fail(
          fmt::format("tp = {} does not divide the {} cores of a {} node", c.tp, c.cores_per_node, instance),
          "train.tp", fmt::format("use tp = {}", nearest_divisors(c.tp, c.cores_per_node, m.heads)));
    if (m.heads % c.tp != 0)
      return fail(fmt::format("tp = {} does not divide the model's {} attention heads", c.tp, m.heads),
                  "train.tp", fmt::format("use tp = {}", nearest_divisors(c.tp, c.cores_per_node, m.heads)));

    s.world_size = std::uint64_t{c.nodes} * c.cores_per_node;
    const std::uint64_t model_parallel = std::uint64_t{c.tp} * c.pp;
    if (s.world_size % model_parallel != 0) {
      const std::uint64_t step = model_parallel / std::gcd(model_parallel, std::uint64_t{c.cores_per_node});
      return fail(fmt::format("world size {} ({} nodes x {} cores) is not a multiple of tp x pp = {}",
                              s.world_size, c.nodes, c.cores_per_node, model_parallel),
                  "cluster.nodes",
                  fmt::format("use nodes = {} (a multiple of {}), or a smaller pp",
                              nearest_multiples(c.nodes, step), step));
    }
    s.dp = s.world_size / model_parallel;
    const std::uint64_t unit = c.mbs * s.dp;
    if (c.gbs % unit != 0)
      return fail(
          fmt::format("gbs = {} is not a multiple of mbs x dp = {} x {} = {}", c.gbs, c.mbs, s.dp, unit),
          "train.gbs",
          fmt::format("use gbs = {}; the bash scripts silently drop the remainder",
                      nearest_multiples(c.gbs, unit)));
    s.dp_shard = s.dp;
    s.grad_accum = c.gbs / unit;

    // The training loop: DistributedSampler(drop_last) gives each DP rank floor(N/DP) samples,
    // the loader (drop_last) floor(that / MBS) micro-steps; an optimizer step every ACC micro-steps,
    // the micro-step counter carrying across epochs.
    return epoch_steps(c, samples, s, "micro-steps");
  }

  // The checkpoint converter (neuronx-distributed v2.28.0,
  // src/neuronx_distributed/scripts/checkpoint_converter.py, convert_full_state_to_tp and
  // merge_tp_checkpoints): with --qkv_linear and any hw_backend but trn2, it regroups the query
  // heads into tp // kv_heads splits; below kv_heads that is none, and torch.cat of no tensors
  // fails. The train stage never starts on weights that were never converted.
  Result<void> check_programs(const ParallelConfig& c, const Recipe& recipe,
                              std::string_view backend) const override {
    const auto& m = recipe.model;
    if (backend == "trn2" || c.tp >= m.kv_heads) return {};
    for (const auto* name : {"convert", "convert_back"}) {
      const auto& stage = recipe.stage(name);
      if (!stage.enabled || !passes_qkv_linear(stage)) continue;
      return fail(
          fmt::format("tp = {} is below the model's {} kv heads: the {} stage's checkpoint converter "
                      "(--qkv_linear, hw_backend {}) cannot split the query heads into tp // kv_heads = 0 "
                      "groups, builds no shards and fails",
                      c.tp, m.kv_heads, name, backend),
          "train.tp",
          fmt::format("use tp = {} or more, a multiple of {} to replicate the kv heads evenly "
                      "(neuronx-distributed 2.28 checkpoint_converter.py, convert_full_state_to_tp)",
                      m.kv_heads, m.kv_heads));
    }
    return {};
  }

  MemoryEstimate memory(const ModelRecipe& m, const ParallelConfig& c, const PlanSteps& s,
                        std::uint64_t capacity) const override {
    return estimate_memory(m, c.tp, c.pp, s.dp, c.mbs, s.grad_accum, capacity);
  }

  // NxD's schedules decay over max_steps - warmup: no decay phase of the recipe's own.
  void schedule(const Recipe& recipe, Plan& p) const override { plan_warmup(recipe.train, p, ""); }

  void annotate(const Recipe& recipe, Plan& p) const override {
    const auto& m = recipe.model;
    if (p.steps_per_epoch == 0)
      p.warnings.push_back(
          fmt::format("one epoch is shorter than one optimizer step: steps come only from the "
                      "micro-steps carried across {} epochs",
                      p.epochs));
    // Grouped-query attention under TP (NxD's --kv_replicator / the converter's
    // --kv_size_multiplier: kv heads replicated).
    if (p.tp > m.kv_heads) {
      if (p.tp % m.kv_heads == 0) {
        p.kv_size_multiplier = p.tp / m.kv_heads;
        p.warnings.push_back(
            fmt::format("tp = {} exceeds the {} kv heads: each kv head is replicated {} times "
                        "(kv_size_multiplier = {}), which costs memory and bandwidth",
                        p.tp, m.kv_heads, p.kv_size_multiplier, p.kv_size_multiplier));
      } else {
        p.kv_size_multiplier = (p.tp + m.kv_heads - 1) / m.kv_heads;
        p.warnings.push_back(
            fmt::format("tp = {} exceeds the {} kv heads and is not a multiple of them: the kv "
                        "heads cannot be replicated evenly; use a tp that is a multiple of {}",
                        p.tp, m.kv_heads, m.kv_heads));
      }
    } else if (m.kv_heads % p.tp != 0) {
      p.warnings.push_back(
          fmt::format("tp = {} does not divide the {} kv heads: they cannot be split evenly across "
                      "the TP ranks",
                      p.tp, m.kv_heads));
    }
    if (m.layers % p.pp != 0)
      p.warnings.push_back(fmt::format(
          "pp = {} does not divide the {} layers: pipeline stages get unequal layers", p.pp, m.layers));
    const auto every = recipe.checkpoint.every;
    if (every > 0 && every <= p.total_steps && p.total_steps % every != 0)
      // NxD's example trainers save only at multiples of --checkpoint_freq, never at the end
      // (tp_zero1_llama_hf_pretrain.py and run_llama_nxd.py).
      p.warnings.push_back(
          fmt::format("checkpoint.every = {} does not divide the {} total steps: the trainer saves at its "
                      "multiples only, so the last {} steps are never saved and convert_back exports step {}",
                      every, p.total_steps, p.total_steps % every, p.total_steps - p.total_steps % every));
    // The legacy track's support (Neuron documentation, "Announcements",
    // announce-eos-nxdt-nxd-core-training; release notes 2.29 to 2.32).
    const auto release = release_number(recipe.upstream.release);
    if (release && *release > 228)
      p.warnings.push_back(
          fmt::format("neuronx-distributed {}: NxD training is not supported from Neuron 2.29 on; 2.28 is "
                      "the last release "
                      "that supports it (set upstream.release = \"2.28\")",
                      recipe.upstream.release));
    if (p.backend == "trn3")
      p.warnings.push_back(
          "no neuronx-distributed release publishes a trn3 training configuration: on trn3 train with the "
          "torchtitan-neuron track (`trnslurm recipes` lists its recipes)");
  }

  void explain(const Plan& p, std::vector<PlanLine>& lines) const override {
    const auto add = [&](std::string name, std::string value, std::string from) {
      lines.push_back({std::move(name), std::move(value), std::move(from)});
    };
    if (p.dataset.tokens && p.dataset.format == "megatron")
      add("samples", fmt::format("{}", p.dataset.samples),
          fmt::format("(tokens {} - 1) // seq_len {}", *p.dataset.tokens, p.seq_len));
    else if (p.dataset.format == "given")
      add("samples", fmt::format("{}", p.dataset.samples), "given on the command line");
    else
      add("samples", fmt::format("{}", p.dataset.samples),
          fmt::format("rows of the {} dataset ({} files)", p.dataset.format, p.dataset.files));
    add("world_size", fmt::format("{}", p.world_size),
        fmt::format("nodes {} x cores_per_node {} ({}, lnc {})", p.nodes, p.cores_per_node, p.instance,
                    p.lnc));
    add("dp", fmt::format("{}", p.dp),
        fmt::format("world_size {} / (tp {} x pp {})", p.world_size, p.tp, p.pp));
    add("grad_accum", fmt::format("{}", p.grad_accum),
        fmt::format("gbs {} / (mbs {} x dp {})", p.gbs, p.mbs, p.dp));
    add("micro_steps_per_epoch", fmt::format("{}", p.micro_steps_per_epoch),
        fmt::format("floor(floor(samples / dp) / mbs) = floor({} / {})", p.samples_per_rank, p.mbs));
    add("steps_per_epoch", fmt::format("{}", p.steps_per_epoch),
        fmt::format("floor(micro_steps_per_epoch / grad_accum) = floor({} / {})", p.micro_steps_per_epoch,
                    p.grad_accum));
    add("total_steps", fmt::format("{}", p.total_steps),
        fmt::format("floor(epochs {} x {} / {}): micro-steps carry across epochs", p.epochs,
                    p.micro_steps_per_epoch, p.grad_accum));
    add("warmup_steps", fmt::format("{}", p.warmup_steps), p.warmup_rule);
  }
};

}  // namespace

const TrainerRule& nxd_rule() {
  static const NxdRule rule;
  return rule;
}

}  // namespace trnslurm
