// TorchTitan's data and batch rule (the current track: TorchTitan Neuron on TorchNeuron). The
// facts are pytorch/torchtitan's, read at c82675eb6eed (2026-08-17, the commit the torchtitan-neuron
// record is read at, before the token budgets of 2026-08-20 replaced local_batch_size,
// global_batch_size and seq_len):
// - torchtitan/hf_datasets/text_datasets.py: text tokenized on the fly, packed into chunks of
//   seq_len + 1 tokens (input: the first seq_len, label: the last seq_len); documents split over
//   the DP ranks (split_dataset_by_node); the data re-looped when it ends, the buffer carried on.
// - torchtitan/distributed/parallel_dims.py: dp_replicate x dp_shard x cp x tp x pp = world size,
//   dp_shard -1 taking the rest; FSDP shards over dp_shard x cp.
// - torchtitan/trainer.py: global batch = local batch x DP x accumulation, refused unless it
//   divides; seq_len divisible by tp (sequence parallel, on by default) x 2cp (when cp > 1);
//   a step is an optimizer step.
// - torchtitan/models/common/decoder.py: tp must divide n_heads and n_kv_heads.
// - torchtitan/components/optimizer/lr_scheduler.py: warmup capped at the total; decay over
//   round(total x decay_ratio) steps (Python's round: half to even), capped at total - warmup, or
//   over every step after warmup when decay_ratio is unset.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "trnslurm/plan/trainer_rule.hpp"
#include "trnslurm/recipe/recompute.hpp"
#include "trnslurm/util/checked.hpp"

namespace trnslurm {

Result<DatasetSize> text_dataset_size(std::uint64_t tokens, std::uint64_t seq_len) {
  if (seq_len == 0) return fail("seq_len is 0", "model.seq_len", "set model.seq_len");
  if (tokens <= seq_len)
    return fail(fmt::format("the dataset holds {} tokens, not enough for one sample of seq_len + 1 = {}",
                            tokens, seq_len + 1),
                "dataset", "use a larger dataset or a shorter model.seq_len");
  DatasetSize size;
  size.samples = tokens / (seq_len + 1);
  size.tokens = tokens;
  size.format = "given";
  return size;
}

MemoryEstimate estimate_memory_fsdp(const ModelRecipe& m, const ParallelConfig& c, const PlanSteps& s,
                                    std::uint64_t capacity) {
  using u64 = std::uint64_t;
  constexpr auto mul = saturating_mul;
  constexpr auto add = saturating_add;
  const auto params = count_parameters(m, c.tp, c.pp);
  const u64 shard = std::max<u64>(saturating_mul(std::max<u64>(s.dp_shard, 1), std::max<u64>(c.cp, 1)), 1);
  const auto sharded = [&](u64 bytes) { return bytes / shard + (bytes % shard != 0 ? 1 : 0); };
  MemoryEstimate e;
  e.fsdp = true;
  e.sharded_over = shard;
  e.parameters = params.total;
  e.parameters_per_core = params.per_core;
  // FSDP2 with TorchTitan's default mixed precision (parameters cast to bf16 for compute,
  // gradients reduced in fp32): the sharded parameters stay fp32 (4 bytes), the sharded
  // gradients fp32 (4), AdamW's m and v fp32 (8), each split over dp_shard x cp.
  e.weights = sharded(mul(4, params.per_core));
  e.gradients = sharded(mul(4, params.per_core));
  e.optimizer = sharded(mul(8, params.per_core));
  // Unsharded while in use: one layer's bf16 weights gathered, the next one prefetched, and one
  // layer's bf16 gradients before their reduce-scatter.
  e.buffers = mul(u64{3} * 2, params.per_layer_per_core);  // three layers, 2 bytes each
  const u64 in_flight = c.pp == 1 ? 1 : std::min<u64>(c.pp, std::max<u64>(s.grad_accum, 1));
  e.activations = activation_bytes(m, c.tp, c.pp, c.cp, c.mbs, in_flight, c.ac);
  e.total = add(add(add(e.weights, e.gradients), add(e.optimizer, e.activations)), e.buffers);
  e.capacity = capacity;
  return e;
}

namespace {

// Python's round(): to nearest, ties to even (the default floating-point rounding mode).
std::uint64_t python_round(double x) {
  return static_cast<std::uint64_t>(std::nearbyint(x));
}

class TorchTitanRule final : public TrainerRule {
 public:
  Result<DatasetSize> from_tokens(std::uint64_t tokens, std::uint64_t seq_len) const override {
    return text_dataset_size(tokens, seq_len);
  }

  Result<PlanSteps> steps(const ParallelConfig& c, const ModelRecipe& m, std::uint64_t samples,
                          std::string_view instance) const override {
    PlanSteps s;
    if (c.nodes == 0 || c.tp == 0 || c.pp == 0 || c.cp == 0 || c.dp_replicate == 0 || c.mbs == 0 ||
        c.gbs == 0 || c.epochs == 0)
      return fail("nodes, tp, pp, cp, dp_replicate, gbs, mbs and epochs must be at least 1", "train.tp",
                  "check the [cluster] and [train] sections");
    if (samples == 0)
      return fail("the dataset holds no samples", "dataset.path", "point dataset.path at the training data");
    // A TP group never spans nodes (trnslurm's rule: TP's collectives run every layer).
    if (c.cores_per_node % c.tp != 0)
      return fail(
          fmt::format("tp = {} does not divide the {} cores of a {} node", c.tp, c.cores_per_node, instance),
          "train.tp", fmt::format("use tp = {}", nearest_divisors(c.tp, c.cores_per_node, m.kv_heads)));
    // decoder.py: the attention's heads and kv heads are split over TP, never replicated.
    if (m.heads % c.tp != 0 || m.kv_heads % c.tp != 0)
      return fail(fmt::format("tp = {} does not divide the model's {} {}heads: TorchTitan refuses it "
                              "(tensor_parallel_degree must divide n_heads and n_kv_heads)",
                              c.tp, m.heads % c.tp != 0 ? m.heads : m.kv_heads,
                              m.heads % c.tp != 0 ? "attention " : "kv "),
                  "train.tp",
                  fmt::format("use tp = {}", nearest_divisors(c.tp, c.cores_per_node, m.kv_heads)));
    // trainer.py: sequence parallel (on by default under TP) needs seq_len divisible by tp;
    // context parallel's load balancing by 2 x cp.
    const std::uint64_t divisor = std::uint64_t{c.tp} * (c.cp > 1 ? 2 * std::uint64_t{c.cp} : 1);
    if (m.seq_len % divisor != 0)
      return fail(fmt::format("seq_len = {} is not divisible by {} (tp {}{}): TorchTitan refuses it for "
                              "sequence/context parallelism",
                              m.seq_len, divisor, c.tp, c.cp > 1 ? fmt::format(" x 2 x cp {}", c.cp) : ""),
                  "model.seq_len", fmt::format("use seq_len = {}", nearest_multiples(m.seq_len, divisor)));

    s.world_size = std::uint64_t{c.nodes} * c.cores_per_node;
    // parallel_dims.py: dp_shard (-1) takes what is left of the world.
    const std::uint64_t fixed = std::uint64_t{c.dp_replicate} * c.cp * c.tp * c.pp;
    if (s.world_size % fixed != 0) {
      const std::uint64_t step = fixed / std::gcd(fixed, std::uint64_t{c.cores_per_node});
      return fail(
          fmt::format("world size {} ({} nodes x {} cores) is not a multiple of dp_replicate {} x cp {} x "
                      "tp {} x pp {} = {}: dp_replicate x dp_shard x cp x tp x pp must equal it",
                      s.world_size, c.nodes, c.cores_per_node, c.dp_replicate, c.cp, c.tp, c.pp, fixed),
          "cluster.nodes",
          fmt::format("use nodes = {} (a multiple of {}), or smaller degrees",
                      nearest_multiples(c.nodes, step), step));
    }
    s.dp_shard = s.world_size / fixed;
    s.dp = s.dp_shard * c.dp_replicate;
    const std::uint64_t unit = c.mbs * s.dp;
    if (c.gbs % unit != 0)
      return fail(
          fmt::format("gbs = {} is not a multiple of mbs x dp = {} x {} = {}: TorchTitan refuses a global "
                      "batch that the local batch and DP do not divide",
                      c.gbs, c.mbs, s.dp, unit),
          "train.gbs", fmt::format("use gbs = {}", nearest_multiples(c.gbs, unit)));
    s.grad_accum = c.gbs / unit;
    // Each DP rank packs its share of the documents; the plan divides the samples evenly (the
    // shares differ by the documents' lengths: docs/plan.md). The data re-loops, so the batches
    // run on across epochs as the micro-steps of NxD's loop do.
    return epoch_steps(c, samples, s, "local batches");
  }

  // TorchTitan loads Hugging Face weights itself or through its own converter: no sharding
  // rule of a separate program to refuse here.
  Result<void> check_programs(const ParallelConfig&, const Recipe&, std::string_view) const override {
    return {};
  }

  MemoryEstimate memory(const ModelRecipe& m, const ParallelConfig& c, const PlanSteps& s,
                        std::uint64_t capacity) const override {
    return estimate_memory_fsdp(m, c, s, capacity);
  }

  void schedule(const Recipe& recipe, Plan& p) const override {
    const auto& t = recipe.train;
    plan_warmup(t, p, ", as TorchTitan's scheduler does");
    const std::uint64_t after_warmup = p.total_steps - p.warmup_steps;
    if (!t.decay_ratio) {
      p.decay_steps = after_warmup;
      p.decay_rule = fmt::format("total_steps {} - warmup {} (no decay_ratio: decays after warmup)",
                                 p.total_steps, p.warmup_steps);
      return;
    }
    std::uint64_t decay = python_round(static_cast<double>(p.total_steps) * *t.decay_ratio);
    p.decay_rule = fmt::format("round(total_steps {} x decay_ratio {:g})", p.total_steps, *t.decay_ratio);
    if (decay > after_warmup) {
      p.warnings.push_back(
          fmt::format("warmup {} + decay {} steps exceed the {} total steps: decay cut to {}, as "
                      "TorchTitan's scheduler does",
                      p.warmup_steps, decay, p.total_steps, after_warmup));
      p.decay_rule += ", capped at total_steps - warmup";
      decay = after_warmup;
    }
    p.decay_steps = decay;
  }

  void annotate(const Recipe& recipe, Plan& p) const override {
    const auto& m = recipe.model;
    if (p.steps_per_epoch == 0)
      p.warnings.push_back(fmt::format(
          "one epoch is shorter than one optimizer step: the data re-loops, steps come from {} epochs",
          p.epochs));
    if (m.layers % p.pp != 0)
      p.warnings.push_back(fmt::format(
          "pp = {} does not divide the {} layers: pipeline stages get unequal layers", p.pp, m.layers));
    if (p.dataset.format == "estimate")
      p.warnings.push_back(
          fmt::format("the steps rest on an ESTIMATE of the dataset's tokens ({}): the chain's token-count "
                      "stage counts them "
                      "with the model's tokenizer, or state the count as dataset.tokens",
                      p.dataset.basis));
  }

  void explain(const Plan& p, std::vector<PlanLine>& lines) const override {
    const auto add = [&](std::string name, std::string value, std::string from) {
      lines.push_back({std::move(name), std::move(value), std::move(from)});
    };
    if (p.dataset.tokens) {
      add("tokens", fmt::format("{}", *p.dataset.tokens),
          p.dataset.format == "estimate" ? fmt::format("ESTIMATE, not a count: {}", p.dataset.basis)
                                         : p.dataset.basis);
      add("samples", fmt::format("{}", p.dataset.samples),
          fmt::format("floor(tokens {} / (seq_len {} + 1)): chunks of seq_len + 1 tokens", *p.dataset.tokens,
                      p.seq_len));
    } else {
      add("samples", fmt::format("{}", p.dataset.samples), "given on the command line");
    }
    add("world_size", fmt::format("{}", p.world_size),
        fmt::format("nodes {} x cores_per_node {} ({}, lnc {})", p.nodes, p.cores_per_node, p.instance,
                    p.lnc));
    add("dp_shard", fmt::format("{}", p.dp_shard),
        fmt::format("world_size {} / (dp_replicate {} x cp {} x tp {} x pp {})", p.world_size, p.dp_replicate,
                    p.cp, p.tp, p.pp));
    add("dp", fmt::format("{}", p.dp),
        fmt::format("dp_replicate {} x dp_shard {}", p.dp_replicate, p.dp_shard));
    add("grad_accum", fmt::format("{}", p.grad_accum),
        fmt::format("gbs {} / (local batch mbs {} x dp {})", p.gbs, p.mbs, p.dp));
    add("batches_per_epoch", fmt::format("{}", p.micro_steps_per_epoch),
        fmt::format("floor(floor(samples / dp) / mbs) = floor({} / {})", p.samples_per_rank, p.mbs));
    add("steps_per_epoch", fmt::format("{}", p.steps_per_epoch),
        fmt::format("floor(batches_per_epoch / grad_accum) = floor({} / {})", p.micro_steps_per_epoch,
                    p.grad_accum));
    add("total_steps", fmt::format("{}", p.total_steps),
        fmt::format("floor(epochs {} x {} / {}): optimizer steps, the data re-looped", p.epochs,
                    p.micro_steps_per_epoch, p.grad_accum));
    add("warmup_steps", fmt::format("{}", p.warmup_steps), p.warmup_rule);
    if (p.decay_steps) {
      add("decay_steps", fmt::format("{}", *p.decay_steps), p.decay_rule);
      add("stable_steps", fmt::format("{}", p.total_steps + 1 - p.warmup_steps - *p.decay_steps),
          "total_steps + 1 - warmup - decay (lr_scheduler.py)");
    }
    add("activation_ckpt", std::string(to_string(p.ac)),
        "train.ac: what the memory estimate assumes the configuration applies");
  }
};

}  // namespace

const TrainerRule& torchtitan_rule() {
  static const TorchTitanRule rule;
  return rule;
}

}  // namespace trnslurm
