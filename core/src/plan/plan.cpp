// The plan: parallelism, steps and warmup exactly as the neuronx-distributed training loop
// counts them as NxD's example trainers do, a memory-fit estimate and a wall-time/cost estimate.
// Formulas and their sources: docs/plan.md.
#include "trnslurm/plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/util/checked.hpp"
#include "trnslurm/version.hpp"

namespace trnslurm {

namespace {

// The integer nearest below and above `value` that is a multiple of `unit` (below omitted when 0).
std::string nearest_multiples(std::uint64_t value, std::uint64_t unit) {
  const std::uint64_t below = value / unit * unit;
  const std::uint64_t above = below + unit;
  if (below == 0) return fmt::format("{}", above);
  return fmt::format("{} or {}", below, above);
}

// Divisors of `n` that also divide `heads`, nearest to `wanted` from below and above.
std::string nearest_divisors(std::uint32_t wanted, std::uint32_t n, std::uint32_t heads) {
  std::optional<std::uint32_t> below;
  std::optional<std::uint32_t> above;
  for (std::uint32_t d = 1; d <= n; ++d) {
    if (n % d != 0 || heads % d != 0) continue;
    if (d < wanted) below = d;
    if (d > wanted && !above) above = d;
  }
  if (below && above) return fmt::format("{} or {}", *below, *above);
  if (below) return fmt::format("{}", *below);
  if (above) return fmt::format("{}", *above);
  return "1";
}

// ceil(ratio x steps), with products that are integers up to rounding error taken as integers:
// 0.01 x 10600 is 106.00000000000001 in binary floating point, and must give 106, not 107.
std::uint64_t ceil_ratio(double ratio, std::uint64_t steps) {
  const double x = ratio * static_cast<double>(steps);
  const double nearest = std::round(x);
  if (std::fabs(x - nearest) <= 1e-9 * std::max(1.0, x)) return static_cast<std::uint64_t>(nearest);
  return static_cast<std::uint64_t>(std::ceil(x));
}

}  // namespace

std::string format_seconds(double s) {
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 60) return fmt::format("{:.1f} min", s / 60);
  if (s >= 1) return fmt::format("{:.3g} s", s);
  return fmt::format("{:.3g} ms", s * 1000);
}

std::string format_bytes(std::uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30);
  if (gib >= 1.0) return fmt::format("{:.1f} GiB", gib);
  if (bytes >= (std::uint64_t{1} << 20))
    return fmt::format("{:.0f} MiB",
                       static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 20));
  if (bytes >= 1024) return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / 1024.0);
  return fmt::format("{} B", bytes);
}

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
  // The estimates saturate: absurd shapes give "huge", never a wrapped small number.
  constexpr auto mul = saturating_mul;
  constexpr auto add = saturating_add;
  const u64 h = m.hidden;
  const u64 head_dim = h / m.heads;
  const u64 kv = m.kv_heads;
  const u64 ffn = m.ffn_hidden;
  const u64 v = m.vocab;
  const u64 s = m.seq_len;
  const u64 layers = m.layers;

  tp = std::max<std::uint32_t>(tp, 1);
  pp = std::max<std::uint32_t>(pp, 1);
  dp = std::max<u64>(dp, 1);

  MemoryEstimate e;
  const u64 per_layer = add(add(mul(2 * h, h), mul(2 * h * kv, head_dim)), add(mul(3 * h, ffn), 2 * h));
  e.parameters = add(add(mul(layers, per_layer), mul(2 * v, h)), h);  // untied embedding and head, final norm

  // One TP rank of the busiest pipeline stage: q/o and the MLP split over TP; each rank holds
  // ceil(kv / tp) kv heads (one replicated head when TP > kv); norms replicated; the embedding
  // and the output head (vocabulary-parallel) sit on the first and last stage, both when PP = 1.
  const u64 layers_per_stage = (layers + pp - 1) / pp;
  const u64 kv_per_rank = (kv + tp - 1) / tp;
  const u64 layer_per_rank =
      add(add(mul(2 * h, h), mul(3 * h, ffn)) / tp, mul(2 * h * kv_per_rank, head_dim) + 2 * h);
  const u64 vocab_per_rank = (v * h + tp - 1) / tp;
  e.parameters_per_core =
      add(add(mul(layers_per_stage, layer_per_rank), (pp == 1 ? 2 : 1) * vocab_per_rank), h);

  // Mixed precision with ZeRO-1 (Rajbhandari et al. 2020, §3): bf16 weights and gradients on
  // every DP rank, fp32 master weights + Adam m and v (12 bytes/parameter) sharded over DP.
  e.weights = mul(2, e.parameters_per_core);
  e.gradients = mul(2, e.parameters_per_core);
  const u64 optimizer_total = mul(12, e.parameters_per_core);
  e.optimizer = optimizer_total / dp + (optimizer_total % dp != 0 ? 1 : 0);

  // Korthikanti et al. 2022, Table 2: with tensor + sequence parallelism and selective
  // recomputation a layer keeps 34·s·b·h/t bytes. 1F1B keeps up to PP micro-batches in flight
  // on the first stage; the loss keeps fp32 logits, 4·s·b·v/t bytes.
  const u64 in_flight = pp == 1 ? 1 : std::min<u64>(pp, std::max<u64>(grad_accum, 1));
  const u64 per_layer_activations = mul(mul(34 * s, mbs), h) / tp;
  e.activations =
      add(mul(mul(per_layer_activations, layers_per_stage), in_flight), mul(mul(4 * s, mbs), v) / tp);
  e.total = add(add(e.weights, e.gradients), add(e.optimizer, e.activations));
  e.capacity = capacity;
  return e;
}

CostEstimate estimate_cost(const Plan& p, double tokens_per_second_per_node, double price_per_node_hour) {
  CostEstimate c;
  c.tokens_per_second_per_node = tokens_per_second_per_node;
  c.price_per_node_hour = price_per_node_hour;
  c.tokens = static_cast<double>(p.total_steps) * static_cast<double>(p.gbs) * static_cast<double>(p.seq_len);
  c.hours = c.tokens / (tokens_per_second_per_node * p.nodes) / 3600.0;
  c.node_hours = c.hours * p.nodes;
  if (price_per_node_hour > 0) c.cost = c.node_hours * price_per_node_hour;
  if (p.step_floor)
    c.mfu = 6.0 * static_cast<double>(p.memory.parameters) * tokens_per_second_per_node * p.nodes /
            p.step_floor->peak_flops;
  return c;
}

Result<PlanSteps> plan_steps(const ParallelConfig& c, const ModelRecipe& m, std::uint64_t samples,
                             std::string_view instance) {
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
  s.grad_accum = c.gbs / unit;

  // The training loop: DistributedSampler(drop_last) gives each DP rank floor(N/DP) samples,
  // the loader (drop_last) floor(that / MBS) micro-steps; an optimizer step every ACC micro-steps,
  // the micro-step counter carrying across epochs.
  s.samples_per_rank = samples / s.dp;
  s.micro_steps_per_epoch = s.samples_per_rank / c.mbs;
  s.steps_per_epoch = s.micro_steps_per_epoch / s.grad_accum;
  if (s.micro_steps_per_epoch > std::numeric_limits<std::uint64_t>::max() / c.epochs)
    return fail(fmt::format("{} epochs of {} micro-steps overflow a 64-bit step counter", c.epochs,
                            s.micro_steps_per_epoch),
                "train.epochs", "use fewer epochs");
  s.total_steps = std::uint64_t{c.epochs} * s.micro_steps_per_epoch / s.grad_accum;
  if (s.total_steps == 0)
    return fail(fmt::format("{} samples make {} micro-steps per DP rank per epoch, fewer than the {} of one "
                            "optimizer step (gbs {} over dp {})",
                            samples, s.micro_steps_per_epoch, s.grad_accum, c.gbs, s.dp),
                "train.gbs", fmt::format("use at least {} samples, a smaller gbs, or more epochs", c.gbs));
  return s;
}

Result<Plan> make_plan(const Recipe& recipe, const DatasetSize& dataset) {
  const auto chosen = choose_instance(recipe.instances, recipe.cluster.instance, recipe.cluster.lnc,
                                      recipe.cluster.cores_per_node);
  if (!chosen) return fail(chosen.error().what, recipe.where(chosen.error().where), chosen.error().hint);
  const auto* instance = chosen->type;
  const auto& t = recipe.train;
  const auto& m = recipe.model;
  Plan p;
  p.instance = recipe.cluster.instance;
  p.instance_origin = std::string(to_string(instance->origin));
  p.backend = instance->target.value.value_or("");
  p.nodes = recipe.cluster.nodes;
  p.lnc = chosen->lnc;
  p.cores_per_node = chosen->cores_per_node;
  p.tp = t.tp;
  p.pp = t.pp;
  p.gbs = t.gbs;
  p.mbs = t.mbs;
  p.seq_len = m.seq_len;
  p.epochs = t.epochs;
  p.dataset = dataset;

  p.warnings = dataset.warnings;
  auto steps = plan_steps({p.nodes, p.cores_per_node, p.tp, p.pp, p.gbs, p.mbs, p.epochs}, m, dataset.samples,
                          p.instance);
  if (!steps) return fail(steps.error().what, recipe.where(steps.error().where), steps.error().hint);
  p.world_size = steps->world_size;
  p.dp = steps->dp;
  p.grad_accum = steps->grad_accum;
  p.samples_per_rank = steps->samples_per_rank;
  p.micro_steps_per_epoch = steps->micro_steps_per_epoch;
  p.steps_per_epoch = steps->steps_per_epoch;
  p.total_steps = steps->total_steps;
  p.placement = plan_placement({p.instance, instance->ultraserver_size(), p.nodes, p.cores_per_node,
                                std::uint64_t{p.tp} * p.pp, recipe.slurm.ultraserver_placement,
                                recipe.slurm.ultraserver_features, slurm_build_version});
  p.samples_dropped_per_epoch = dataset.samples - p.steps_per_epoch * p.gbs;
  if (p.steps_per_epoch == 0)
    p.warnings.push_back(
        fmt::format("one epoch is shorter than one optimizer step: steps come only from the "
                    "micro-steps carried across {} epochs",
                    p.epochs));

  // Warmup: fixed, or ceil(ratio x steps of one epoch); never more than the total.
  if (t.warmup_steps) {
    p.warmup_steps = *t.warmup_steps;
    p.warmup_rule = fmt::format("fixed (train.warmup_steps = {})", *t.warmup_steps);
  } else {
    p.warmup_steps = ceil_ratio(t.warmup_ratio, p.steps_per_epoch);
    p.warmup_rule = fmt::format("ceil({:g} x {} steps per epoch)", t.warmup_ratio, p.steps_per_epoch);
  }
  if (p.warmup_steps > p.total_steps) {
    p.warnings.push_back(fmt::format("warmup of {} steps exceeds the {} total steps: capped at {}",
                                     p.warmup_steps, p.total_steps, p.total_steps));
    p.warmup_rule += fmt::format(", capped at total_steps");
    p.warmup_steps = p.total_steps;
  }

  // Grouped-query attention under TP (NxD's --kv_replicator / the converter's --kv_size_multiplier: kv heads
  // replicated).
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

  p.checkpoint_every = recipe.checkpoint.every == 0 ? p.total_steps : recipe.checkpoint.every;
  if (recipe.checkpoint.every > p.total_steps)
    p.warnings.push_back(
        fmt::format("checkpoint.every = {} exceeds the {} total steps: no checkpoint before the end",
                    recipe.checkpoint.every, p.total_steps));
  else if (recipe.checkpoint.every > 0 && p.total_steps % recipe.checkpoint.every != 0)
    // NxD's example trainers save only at multiples of --checkpoint_freq, never at the end
    // (release 2.29: tp_zero1_llama_hf_pretrain.py and run_llama_nxd.py).
    p.warnings.push_back(
        fmt::format("checkpoint.every = {} does not divide the {} total steps: the trainer saves at its "
                    "multiples only, so the last {} steps are never saved and convert_back exports step {}",
                    recipe.checkpoint.every, p.total_steps, p.total_steps % recipe.checkpoint.every,
                    p.total_steps - p.total_steps % recipe.checkpoint.every));

  // What the figures used here rest on: a definition that replaces another, a figure no public
  // source confirms.
  if (!instance->replaces.empty())
    p.warnings.push_back(fmt::format("{} is the {} definition at {}, which replaces {}", p.instance,
                                     p.instance_origin, to_string(instance->at), instance->replaces));
  if (const auto unconfirmed = unconfirmed_figures(
          *instance, {"devices", "cores_per_device", "lnc", "lnc_default", "hbm_gib_per_device",
                      "ultraserver_nodes", "bf16_tflops_per_device"});
      !unconfirmed.empty() && !instance->cpu())
    p.warnings.push_back(
        fmt::format("{} ({}): no public source confirms {}; check them on a node (trnslurm doctor)",
                    p.instance, p.instance_origin, fmt::join(unconfirmed, "; ")));
  for (auto& w : p.placement.warnings) p.warnings.push_back(std::move(w));
  p.placement.warnings.clear();

  p.memory =
      estimate_memory(m, p.tp, p.pp, p.dp, p.mbs, p.grad_accum, memory_per_core_bytes(*instance, p.lnc));
  if (!p.memory.fits())
    p.warnings.push_back(
        fmt::format("estimated memory per NeuronCore {} exceeds the {} of a {} core: weights {} + gradients "
                    "{} + optimizer {} "
                    "+ activations {}; raise tp or pp, lower mbs or seq_len",
                    format_bytes(p.memory.total), format_bytes(p.memory.capacity), p.instance,
                    format_bytes(p.memory.weights), format_bytes(p.memory.gradients),
                    format_bytes(p.memory.optimizer), format_bytes(p.memory.activations)));

  if (instance->bf16_tflops_per_device.value && instance->devices.value && !instance->cpu()) {
    StepTimeFloor f;
    f.flops_per_step = 6.0 * static_cast<double>(p.memory.parameters) * static_cast<double>(p.gbs) *
                       static_cast<double>(p.seq_len);
    f.peak_flops = *instance->bf16_tflops_per_device.value * 1e12 * *instance->devices.value * p.nodes;
    if (f.peak_flops > 0) {
      f.seconds = f.flops_per_step / f.peak_flops;
      p.step_floor = f;
    }
  }

  if (recipe.estimate.tokens_per_second_per_node > 0)
    p.cost =
        estimate_cost(p, recipe.estimate.tokens_per_second_per_node, recipe.estimate.price_per_node_hour);

  p.recipe_values = {
      {"model_name", m.name},
      {"layers", m.layers},
      {"hidden", m.hidden},
      {"heads", m.heads},
      {"kv_heads", m.kv_heads},
      {"ffn_hidden", m.ffn_hidden},
      {"vocab", m.vocab},
      {"pretrained", m.pretrained},
      {"lr", t.lr},
      {"dataset_path", recipe.dataset.path},
      {"dataset_format", recipe.dataset.format},
      {"dataset_split", recipe.dataset.split},
      {"checkpoint_dir", recipe.checkpoint.dir},
      {"converted_dir", recipe.checkpoint.converted_dir},
      {"export_dir", recipe.checkpoint.export_dir},
  };
  return p;
}

nlohmann::json to_json(const MemoryEstimate& m) {
  return {
      {"parameters", m.parameters},
      {"parameters_per_core", m.parameters_per_core},
      {"weights_bytes", m.weights},
      {"gradients_bytes", m.gradients},
      {"optimizer_bytes", m.optimizer},
      {"activations_bytes", m.activations},
      {"total_bytes", m.total},
      {"capacity_bytes", m.capacity},
      // capacity - total: negative when it does not fit; null without a device memory limit
      {"margin_bytes", m.capacity == 0 ? nlohmann::json(nullptr)
                                       : nlohmann::json(static_cast<std::int64_t>(m.capacity) -
                                                        static_cast<std::int64_t>(m.total))},
      {"fits", m.fits()},
  };
}

nlohmann::json to_json(const Plan& p) {
  nlohmann::json j = p.recipe_values;
  j.update({
      {"instance", p.instance},
      {"instance_origin", p.instance_origin},
      {"hw_backend", p.backend},
      {"nodes", p.nodes},
      {"cores_per_node", p.cores_per_node},
      {"lnc", p.lnc},
      {"tp", p.tp},
      {"pp", p.pp},
      {"gbs", p.gbs},
      {"mbs", p.mbs},
      {"seq_len", p.seq_len},
      {"epochs", p.epochs},
      {"samples", p.dataset.samples},
      {"tokens", p.dataset.tokens ? nlohmann::json(*p.dataset.tokens) : nlohmann::json(nullptr)},
      {"dataset_source", p.dataset.format},
      {"world_size", p.world_size},
      {"dp", p.dp},
      {"grad_accum", p.grad_accum},
      {"batch_per_dp_rank", p.mbs * p.grad_accum},  // gbs / dp: run_llama_nxd's --train_batch_size
      {"samples_per_rank", p.samples_per_rank},
      {"micro_steps_per_epoch", p.micro_steps_per_epoch},
      {"steps_per_epoch", p.steps_per_epoch},
      {"total_steps", p.total_steps},
      {"warmup_steps", p.warmup_steps},
      {"samples_dropped_per_epoch", p.samples_dropped_per_epoch},
      {"tokens_per_step", p.gbs * p.seq_len},
      {"kv_size_multiplier", p.kv_size_multiplier},
      {"checkpoint_every", p.checkpoint_every},
  });
  j["memory"] = to_json(p.memory);
  j["placement"] = {{"method", p.placement.method},
                    {"group_nodes", p.placement.group_nodes},
                    {"ultraserver_nodes", p.placement.ultraserver_nodes},
                    {"features", p.placement.features},
                    {"sbatch_args", p.placement.sbatch_args},
                    {"why", p.placement.why}};
  if (p.step_floor)
    j["step_time_floor"] = {{"seconds", p.step_floor->seconds},
                            {"flops_per_step", p.step_floor->flops_per_step},
                            {"peak_flops", p.step_floor->peak_flops}};
  if (p.cost) {
    j["estimate"] = {{"tokens", p.cost->tokens},
                     {"hours", p.cost->hours},
                     {"node_hours", p.cost->node_hours},
                     {"tokens_per_second_per_node", p.cost->tokens_per_second_per_node},
                     {"rate_from", p.cost->rate_from}};
    if (p.cost->cost) j["estimate"]["cost"] = *p.cost->cost;
    if (p.cost->mfu) j["estimate"]["mfu"] = *p.cost->mfu;
  }
  j["warnings"] = p.warnings;
  return j;
}

std::vector<PlanLine> explain(const Plan& p) {
  std::vector<PlanLine> lines;
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
      fmt::format("nodes {} x cores_per_node {} ({}, lnc {})", p.nodes, p.cores_per_node, p.instance, p.lnc));
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
  add("tokens_per_step", fmt::format("{}", p.gbs * p.seq_len),
      fmt::format("gbs {} x seq_len {}", p.gbs, p.seq_len));
  add("dropped_per_epoch", fmt::format("{}", p.samples_dropped_per_epoch),
      "samples - steps_per_epoch x gbs (drop_last, incomplete accumulation)");
  add("memory_per_core", format_bytes(p.memory.total),
      fmt::format("weights {} + grads {} + optimizer {} (ZeRO-1 over dp {}) + activations {}{}",
                  format_bytes(p.memory.weights), format_bytes(p.memory.gradients),
                  format_bytes(p.memory.optimizer), p.dp, format_bytes(p.memory.activations),
                  p.memory.capacity == 0 ? std::string(", no device memory limit")
                                         : fmt::format(", of {} per core{}", format_bytes(p.memory.capacity),
                                                       p.memory.fits() ? "" : ": DOES NOT FIT")));
  if (p.step_floor)
    add("step_time_floor", format_seconds(p.step_floor->seconds),
        fmt::format("6 x {:.3g} parameters x {} tokens / ({:.3g} FLOPS: peak dense BF16 of {} nodes)",
                    static_cast<double>(p.memory.parameters), p.gbs * p.seq_len, p.step_floor->peak_flops,
                    p.nodes));
  if (p.placement.method != "none" || p.placement.group_nodes > 1)
    add("placement",
        p.placement.sbatch_args.empty()
            ? (p.placement.method == "constraint"
                   ? fmt::format("--constraint=[{}] (expanded from the cluster's features at submit)",
                                 fmt::join(p.placement.features, "|"))
                   : std::string("none"))
            : fmt::format("{}", fmt::join(p.placement.sbatch_args, " ")),
        fmt::format("TP x PP groups span {} of the {} servers of an UltraServer; {}", p.placement.group_nodes,
                    p.placement.ultraserver_nodes, p.placement.why));
  if (p.cost) {
    add("wall_time", format_seconds(p.cost->hours * 3600),
        fmt::format("{:.3g} tokens / ({:.4g} tokens/s per node ({}) x {} nodes)", p.cost->tokens,
                    p.cost->tokens_per_second_per_node, p.cost->rate_from, p.nodes));
    if (p.cost->mfu)
      add("mfu", fmt::format("{:.1f} %", *p.cost->mfu * 100),
          "6 x parameters x tokens_per_second_per_node / peak dense BF16 per node");
    if (p.cost->cost)
      add("cost",
          *p.cost->cost >= 1.0 ? fmt::format("{:.2f}", *p.cost->cost) : fmt::format("{:.4f}", *p.cost->cost),
          fmt::format("{:.3g} node-hours x price_per_node_hour", p.cost->node_hours));
  }
  return lines;
}

}  // namespace trnslurm
