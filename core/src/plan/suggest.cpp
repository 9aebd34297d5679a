// `plan --suggest`: the search over parallel configurations and the step-time model
// (docs/plan.md, "Suggestions"). The rules and the memory estimate are the recipe's trainer rule's
// (trainer_rule.hpp): a suggestion is exactly what `trnslurm plan` would compute for that configuration.
#include "trnslurm/plan/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/plan/trainer_rule.hpp"
#include "trnslurm/util/enum_names.hpp"

namespace trnslurm {

namespace {
constexpr std::array<EnumName<RankBy>, 2> rank_by_names{{{RankBy::time, "time"}, {RankBy::cost, "cost"}}};
constexpr std::array<EnumName<Link>, 4> link_names{
    {{Link::none, "none"}, {Link::device, "device"}, {Link::neuronlink, "neuronlink"}, {Link::efa, "efa"}}};
constexpr std::array<EnumName<KvHeads>, 3> kv_names{
    {{KvHeads::split, "split"}, {KvHeads::replicated, "replicated"}, {KvHeads::uneven, "uneven"}}};
}  // namespace

std::string_view to_string(RankBy by) {
  return name_of(rank_by_names, by);
}
std::optional<RankBy> rank_by_named(std::string_view name) {
  return value_named(rank_by_names, name);
}
std::string_view to_string(Link link) {
  return name_of(link_names, link);
}
std::string_view to_string(KvHeads kv) {
  return name_of(kv_names, kv);
}

namespace {

std::vector<std::uint32_t> divisors(std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// What the ranking compares, in order (the JSON's `sort_key` lists the same values).
auto sort_key(const Suggestion& s, RankBy by) {
  const double metric = !s.step ? 0.0 : (by == RankBy::time ? s.hours : s.node_hours);
  return std::tuple{!s.memory.fits(),    s.kv == KvHeads::uneven,
                    !s.step.has_value(), metric,
                    s.config.nodes,      s.memory.total,
                    s.config.tp,         s.config.pp,
                    s.config.mbs,        s.lnc};
}

// The figures the model reads from the instance table, for notes on unconfirmed ones.
const std::vector<std::string_view>& model_figures() {
  static const std::vector<std::string_view> keys{
      "devices",      "cores_per_device",    "lnc",     "hbm_gib_per_device", "bf16_tflops_per_device",
      "hbm_gb_per_s", "neuronlink_gb_per_s", "efa_gbps"};
  return keys;
}

struct Search {
  const Recipe& recipe;
  const InstanceType& type;
  std::uint64_t samples = 0;
  const SuggestOptions& options;
  std::optional<double> price;

  Result<Suggestion> evaluate(std::uint32_t lnc, std::uint32_t cores, std::uint32_t tp, std::uint32_t pp,
                              std::uint32_t nodes, std::uint64_t mbs, std::uint64_t capacity) const {
    const auto& m = recipe.model;
    const auto& t = recipe.train;
    const auto& rule = trainer_rule(recipe.upstream.trainer);
    Suggestion s;
    s.config = {nodes, cores, tp, pp, t.gbs, mbs, t.epochs, t.cp, t.dp_replicate, t.ac};
    s.lnc = lnc;
    auto steps = rule.steps(s.config, m, samples, type.name);
    if (!steps) return std::unexpected(std::move(steps.error()));
    // What the recipe's converters refuse is refused here too: never ranked, never applied.
    if (auto ok = rule.check_programs(s.config, recipe, type.target.value.value_or("")); !ok)
      return std::unexpected(std::move(ok.error()));
    s.steps = *steps;
    s.kv = m.kv_heads % tp == 0 ? KvHeads::split
                                : (tp % m.kv_heads == 0 ? KvHeads::replicated : KvHeads::uneven);
    s.memory = rule.memory(m, s.config, s.steps, capacity);
    s.step = estimate_step_time(type, m, s, options.efficiency, s.no_estimate);
    if (s.step) {
      s.hours = static_cast<double>(s.steps.total_steps) * s.step->total / 3600.0;
      s.node_hours = s.hours * nodes;
      if (price) s.cost = s.node_hours * *price;
    }
    return s;
  }
};

}  // namespace

std::optional<StepTime> estimate_step_time(const InstanceType& instance, const ModelRecipe& m,
                                           const Suggestion& s, double efficiency, std::string& why) {
  const auto& c = s.config;
  if (instance.cpu() || !instance.bf16_tflops_per_device.value || !instance.devices.value) {
    why = fmt::format("{} has no bf16_tflops_per_device", instance.name);
    return std::nullopt;
  }
  const double devices = *instance.devices.value;

  StepTime t;
  const double tokens_per_step = static_cast<double>(c.gbs) * static_cast<double>(m.seq_len);
  const double peak = *instance.bf16_tflops_per_device.value * 1e12 * devices * c.nodes;
  t.compute = 6.0 * static_cast<double>(s.memory.parameters) * tokens_per_step / (peak * efficiency);

  // A group of `span` consecutive ranks, starting at a multiple of `span`: inside one device,
  // inside one node, or across nodes.
  const std::uint32_t rpd = c.cores_per_node / *instance.devices.value;  // ranks (logical cores) per device
  const auto link_of = [&](std::uint64_t span) {
    if (span <= 1) return Link::none;
    if (span <= rpd && rpd % span == 0) return Link::device;
    if (span <= c.cores_per_node && c.cores_per_node % span == 0) return Link::neuronlink;
    return Link::efa;
  };
  // One rank's share of the link: every rank of a device (of a node, for EFA) sends at once.
  const auto per_rank = [&](const Figure<double>& f, std::string_view key, double scale,
                            double ranks) -> std::optional<double> {
    if (!f.value || *f.value <= 0) {
      why = fmt::format("{} has no {}", instance.name, key);
      return std::nullopt;
    }
    return *f.value * scale / ranks;
  };
  const auto bandwidth = [&](Link link) -> std::optional<double> {
    switch (link) {
      case Link::none:
        return 0.0;
      case Link::device:
        return per_rank(instance.hbm_gb_per_s, "hbm_gb_per_s", 1e9, rpd);
      case Link::neuronlink:
        return per_rank(instance.neuronlink_gb_per_s, "neuronlink_gb_per_s", 1e9, rpd);
      case Link::efa:
        return per_rank(instance.efa_gbps, "efa_gbps", 1e9 / 8, c.cores_per_node);
    }
    return std::nullopt;
  };

  // Tensor parallelism with sequence parallelism (Korthikanti et al. 2022, §4.2.2): per layer and
  // micro-batch, an all-gather and a reduce-scatter around attention and around the MLP in the
  // forward pass, as many in the backward, each of the s x b x h bf16 activations, of which a ring
  // sends (TP - 1) / TP from each rank. TP groups are consecutive ranks inside one node.
  const std::uint32_t stage_layers = (m.layers + c.pp - 1) / c.pp;  // the busiest stage's: ceil(L / PP)
  const double layers_per_stage = stage_layers;
  const double micro_batches = static_cast<double>(s.steps.grad_accum);
  t.tp_link = link_of(c.tp);
  t.tp_bytes = 8.0 * layers_per_stage * micro_batches * (c.tp - 1.0) / c.tp * 2.0 *
               static_cast<double>(m.seq_len) * static_cast<double>(c.mbs) * m.hidden;
  const auto tp_bw = bandwidth(t.tp_link);
  if (!tp_bw) return std::nullopt;
  t.tp_bytes_per_s = *tp_bw;
  if (t.tp_bytes > 0) t.tp_comm = t.tp_bytes / t.tp_bytes_per_s;

  // 1F1B: each stage idles (PP - 1) micro-batch slots of the micro-batches + PP - 1 it spans.
  const double busy = t.compute + t.tp_comm;
  t.bubble_fraction = (c.pp - 1.0) / (micro_batches + c.pp - 1.0);
  t.bubble = busy * (c.pp - 1.0) / micro_batches;

  // ZeRO-1 over DP: bf16 gradients reduce-scattered and parameters all-gathered, 2 (DP - 1) / DP
  // of one rank's bf16 parameters each way. NxD orders ranks TP fastest, then DP, then PP
  // (neuronx-distributed parallel_state.py, "tp-dp-pp"): the DP groups of one pipeline stage
  // are its world / PP consecutive ranks, inside a node when that block is.
  const std::uint64_t dp = s.steps.dp;
  const std::uint64_t stage_block = s.steps.world_size / c.pp;
  t.dp_link = dp <= 1 ? Link::none : link_of(stage_block);
  t.dp_bytes = dp <= 1 ? 0.0
                       : 2.0 * (static_cast<double>(dp) - 1.0) / static_cast<double>(dp) * 2.0 *
                             static_cast<double>(s.memory.parameters_per_core);
  const auto dp_bw = bandwidth(t.dp_link);
  if (!dp_bw) return std::nullopt;
  t.dp_bytes_per_s = *dp_bw;
  if (t.dp_bytes > 0) t.dp_allreduce = t.dp_bytes / t.dp_bytes_per_s;

  t.total = busy + t.bubble + t.dp_allreduce;
  return t;
}

Result<SuggestResult> suggest(const Recipe& recipe, const DatasetSize& dataset,
                              const SuggestOptions& options) {
  const auto chosen = choose_instance(recipe.instances, recipe.cluster.instance, recipe.cluster.lnc,
                                      recipe.cluster.cores_per_node);
  if (!chosen) return fail(chosen.error().what, recipe.where(chosen.error().where), chosen.error().hint);
  if (options.mbs_max == 0)
    return fail("the largest micro-batch must be at least 1", "--mbs-max", "use 1 or more");
  if (!(options.efficiency > 0 && options.efficiency <= 1))
    return fail(fmt::format("efficiency {} is not in (0, 1]", options.efficiency), "--efficiency",
                fmt::format("use a fraction of the peak rate, such as {}", default_efficiency));
  const auto& type = *chosen->type;
  SuggestResult r;
  r.model = recipe.model.name;
  r.instance = recipe.cluster.instance;
  r.gbs = recipe.train.gbs;
  r.seq_len = recipe.model.seq_len;
  r.epochs = recipe.train.epochs;
  r.samples = dataset.samples;
  r.options = options;
  if (r.options.nodes_max == 0) r.options.nodes_max = recipe.cluster.nodes;
  if (recipe.estimate.price_per_node_hour > 0) r.price_per_node_hour = recipe.estimate.price_per_node_hour;
  const Search search{recipe, type, dataset.samples, r.options, r.price_per_node_hour};

  const auto refuse = [&](Error&& e) {
    auto it = std::ranges::find(r.refused, e.where, &Refusals::key);
    if (it == r.refused.end()) {
      r.refused.push_back({e.where, 0, std::move(e.what)});
      it = r.refused.end() - 1;
    }
    ++it->count;
  };

  // The recipe's builder fills cores_per_node in: only a value the recipe wrote limits the LNCs.
  const auto written_cores =
      recipe.positions.contains("cluster.cores_per_node") ? recipe.cluster.cores_per_node : std::nullopt;
  std::vector<std::uint32_t> lncs{chosen->lnc};
  if (!type.cpu() && type.lnc.value) lncs = *type.lnc.value;
  const auto layer_divisors = divisors(recipe.model.layers);
  for (const std::uint32_t lnc : lncs) {
    const auto cores = cores_per_node(type, lnc, written_cores);
    if (!cores) {
      r.notes.push_back(fmt::format("lnc = {} not searched: {}", lnc, cores.error().what));
      continue;
    }
    const std::uint64_t capacity = memory_per_core_bytes(type, lnc);
    for (const std::uint32_t tp : divisors(*cores))
      for (const std::uint32_t pp : layer_divisors)
        for (std::uint32_t nodes = 1; nodes <= r.options.nodes_max; ++nodes)
          for (std::uint64_t mbs = 1; mbs <= r.options.mbs_max; ++mbs) {
            ++r.considered;
            auto s = search.evaluate(lnc, *cores, tp, pp, nodes, mbs, capacity);
            if (s)
              r.ranked.push_back(std::move(*s));
            else
              refuse(std::move(s.error()));
          }
  }
  const auto by = r.options.by;
  const auto before = [by](const Suggestion& a, const Suggestion& b) {
    return sort_key(a, by) < sort_key(b, by);
  };
  std::ranges::sort(r.ranked, before);
  for (std::size_t i = 0; i < r.ranked.size(); ++i) r.ranked[i].rank = i + 1;

  const auto& t = recipe.train;
  auto own = search.evaluate(chosen->lnc, chosen->cores_per_node, t.tp, t.pp, recipe.cluster.nodes, t.mbs,
                             memory_per_core_bytes(type, chosen->lnc));
  if (own) {
    r.recipe_rank = 1 + static_cast<std::size_t>(std::ranges::count_if(
                            r.ranked, [&](const Suggestion& s) { return before(s, *own); }));
    own->rank = r.recipe_rank;
    r.recipe_in_search = recipe.cluster.nodes <= r.options.nodes_max && t.mbs <= r.options.mbs_max &&
                         recipe.model.layers % t.pp == 0 &&
                         std::ranges::find(lncs, chosen->lnc) != lncs.end();
    r.recipe = std::move(*own);
  } else {
    r.recipe_refused = fmt::format("{}: {}", own.error().where, own.error().what);
  }

  if (!type.cpu())
    if (const auto unconfirmed = unconfirmed_figures(type, model_figures()); !unconfirmed.empty())
      r.notes.push_back(
          fmt::format("{}: no public source confirms {}", type.name, fmt::join(unconfirmed, "; ")));
  if (by == RankBy::cost && !r.price_per_node_hour)
    r.notes.push_back(
        "the recipe gives no estimate.price_per_node_hour: ranked by node-hours, which orders as cost does");
  return r;
}

nlohmann::json to_json(const Suggestion& s) {
  nlohmann::json j = {
      {"rank", s.rank},
      {"nodes", s.config.nodes},
      {"lnc", s.lnc},
      {"cores_per_node", s.config.cores_per_node},
      {"tp", s.config.tp},
      {"pp", s.config.pp},
      {"dp", s.steps.dp},
      {"mbs", s.config.mbs},
      {"grad_accum", s.steps.grad_accum},
      {"world_size", s.steps.world_size},
      {"total_steps", s.steps.total_steps},
      {"kv_heads", to_string(s.kv)},
      {"memory", to_json(s.memory)},
  };
  if (s.step) {
    const auto& t = *s.step;
    j["step_time"] = {
        {"compute_s", t.compute},
        {"tp_comm_s", t.tp_comm},
        {"tp_link", to_string(t.tp_link)},
        {"tp_bytes", t.tp_bytes},
        {"tp_bytes_per_s", t.tp_bytes_per_s},
        {"bubble_s", t.bubble},
        {"bubble_fraction", t.bubble_fraction},
        {"dp_allreduce_s", t.dp_allreduce},
        {"dp_link", to_string(t.dp_link)},
        {"dp_bytes", t.dp_bytes},
        {"dp_bytes_per_s", t.dp_bytes_per_s},
        {"total_s", t.total},
    };
    j["hours"] = s.hours;
    j["node_hours"] = s.node_hours;
    j["cost"] = s.cost ? nlohmann::json(*s.cost) : nlohmann::json(nullptr);
  } else {
    j["step_time"] = nullptr;
    j["no_estimate"] = s.no_estimate;
  }
  return j;
}

nlohmann::json to_json(const SuggestResult& r, std::size_t top) {
  const auto metric = r.options.by == RankBy::time ? "hours" : "node_hours";
  nlohmann::json j = {
      {"model", r.model},
      {"instance", r.instance},
      {"gbs", r.gbs},
      {"seq_len", r.seq_len},
      {"epochs", r.epochs},
      {"samples", r.samples},
      {"by", to_string(r.options.by)},
      {"efficiency", r.options.efficiency},
      {"nodes_max", r.options.nodes_max},
      {"mbs_max", r.options.mbs_max},
      {"price_per_node_hour", r.price_per_node_hour ? nlohmann::json(*r.price_per_node_hour) : nullptr},
      {"considered", r.considered},
      {"accepted", r.ranked.size()},
      {"fit", std::ranges::count_if(r.ranked, [](const Suggestion& s) { return s.memory.fits(); })},
  };
  j["ranking"] = {
      {"sort_key",
       {"does_not_fit", "kv_heads_uneven", "no_estimate", metric, "nodes", "memory.total_bytes", "tp", "pp",
        "mbs", "lnc"}},
      {"why",
       fmt::format(
           "ascending, each value breaking the ties of the ones before it: configurations that fit "
           "first, then kv heads split or replicated evenly, then those with a step-time estimate, then "
           "{}, then fewer nodes, less memory per core, smaller tp, pp, mbs and lnc",
           r.options.by == RankBy::time ? "hours to train the planned epochs"
                                        : "node-hours to train them (cost = node-hours x price)")},
  };
  j["step_time_model"] = {
      {"compute_s",
       "6 x parameters x gbs x seq_len / (bf16_tflops_per_device x 1e12 x devices x nodes x efficiency)"},
      {"tp_comm_s",
       "8 x ceil(layers / pp) x grad_accum x (tp - 1) / tp x 2 x seq_len x mbs x hidden bytes / one rank's "
       "share of "
       "the link (device: hbm_gb_per_s, neuronlink: neuronlink_gb_per_s, per device / ranks per device)"},
      {"bubble_s",
       "(compute_s + tp_comm_s) x (pp - 1) / grad_accum; bubble_fraction = (pp - 1) / (grad_accum + pp - 1)"},
      {"dp_allreduce_s",
       "2 x (dp - 1) / dp x 2 x parameters_per_core bytes / one rank's share of the link (efa: efa_gbps / 8 "
       "/ "
       "cores_per_node when a pipeline stage's ranks span nodes)"},
      {"total_s", "compute_s + tp_comm_s + bubble_s + dp_allreduce_s"},
      {"hours", "total_steps x total_s / 3600"},
  };
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& x : r.refused)
    refused.push_back({{"key", x.key}, {"count", x.count}, {"example", x.example}});
  j["refused"] = refused;
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < r.ranked.size() && i < top; ++i) {
    auto e = to_json(r.ranked[i]);
    const auto k = sort_key(r.ranked[i], r.options.by);
    e["sort_key"] = {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k),
                     std::get<5>(k), std::get<6>(k), std::get<7>(k), std::get<8>(k), std::get<9>(k)};
    list.push_back(std::move(e));
  }
  j["suggestions"] = list;
  if (r.recipe) {
    j["recipe"] = to_json(*r.recipe);
    j["recipe"]["in_search"] = r.recipe_in_search;
  } else {
    j["recipe"] = {{"refused", r.recipe_refused}};
  }
  j["notes"] = r.notes;
  return j;
}

}  // namespace trnslurm
