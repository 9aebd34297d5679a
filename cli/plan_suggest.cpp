// `trnslurm plan --suggest`: the ranked table (or JSON) of the search in core/src/plan/suggest.cpp,
// and `--apply N`, which writes a configuration into the recipe file, keeping everything else.
#include "plan_suggest.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "number_options.hpp"
#include "output.hpp"
#include "trnslurm/plan/suggest_apply.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::cli {

namespace {

std::string signed_bytes(const MemoryEstimate& m) {
  if (m.capacity == 0) return "no limit";
  return m.fits() ? "+" + format_bytes(m.capacity - m.total) : "-" + format_bytes(m.total - m.capacity);
}

std::string seconds_or_dash(const std::optional<StepTime>& t, double StepTime::*term) {
  if (!t) return "-";
  return (*t).*term == 0 ? std::string("0") : format_seconds((*t).*term);
}

std::string remark(const Suggestion& s, std::uint32_t kv_heads) {
  std::vector<std::string> out;
  if (!s.memory.fits()) out.emplace_back("does not fit");
  if (s.kv == KvHeads::replicated) out.push_back(fmt::format("kv x{}", s.config.tp / kv_heads));
  if (s.kv == KvHeads::uneven) out.emplace_back("kv uneven");
  if (!s.step) out.push_back(s.no_estimate);
  return fmt::format("{}", fmt::join(out, ", "));
}

std::vector<std::string> row(const Suggestion& s, std::string rank, const SuggestResult& r,
                             std::uint32_t kv_heads) {
  const auto& t = s.step;
  std::vector<std::string> cells{
      std::move(rank),
      fmt::format("{}", s.config.nodes),
      fmt::format("{}", s.lnc),
      fmt::format("{}", s.config.tp),
      fmt::format("{}", s.config.pp),
      fmt::format("{}", s.steps.dp),
      fmt::format("{}", s.config.mbs),
      fmt::format("{}", s.steps.grad_accum),
      format_bytes(s.memory.total),
      signed_bytes(s.memory),
      seconds_or_dash(t, &StepTime::total),
      seconds_or_dash(t, &StepTime::compute),
      seconds_or_dash(t, &StepTime::tp_comm),
      seconds_or_dash(t, &StepTime::bubble),
      seconds_or_dash(t, &StepTime::dp_allreduce),
      t ? format_seconds(s.hours * 3600) : "-",
      t ? fmt::format("{:.0f}", s.node_hours) : "-",
  };
  if (r.price_per_node_hour) cells.push_back(s.cost ? fmt::format("{:.0f}", *s.cost) : "-");
  cells.push_back(remark(s, kv_heads));
  return cells;
}

void print_table(const SuggestResult& r, const Recipe& recipe, std::size_t top) {
  fmt::print("suggestions for {} on {}: gbs {}, seq_len {}, {} epoch{} of {} samples\n",
             r.model.empty() ? "the model" : r.model, r.instance, r.gbs, r.seq_len, r.epochs,
             r.epochs == 1 ? "" : "s", r.samples);
  fmt::print(
      "  searched nodes 1..{}, mbs 1..{}, every lnc, tp dividing a node's cores, pp dividing the {} layers\n",
      r.options.nodes_max, r.options.mbs_max, recipe.model.layers);
  const auto fit = std::ranges::count_if(r.ranked, [](const Suggestion& s) { return s.memory.fits(); });
  fmt::print("  {} considered: {} accepted by the plan's rules, {} of them fit in memory\n", r.considered,
             r.ranked.size(), fit);
  for (const auto& x : r.refused) fmt::print("  refused {} ({}), e.g. {}\n", x.count, x.key, x.example);
  fmt::print("  ranked by {}; step time at {:g} of peak BF16 (docs/plan.md, \"Suggestions\")\n",
             r.options.by == RankBy::time ? "hours to train" : "node-hours (cost)", r.options.efficiency);

  std::vector<std::string> head{"rank", "nodes",  "lnc",      "tp",     "pp",    "dp",
                                "mbs",  "acc",    "mem/core", "margin", "step",  "compute",
                                "tp",   "bubble", "dp",       "train",  "node-h"};
  if (r.price_per_node_hour) head.emplace_back("cost");
  head.emplace_back("");
  std::vector<std::vector<std::string>> rows{head};
  for (std::size_t i = 0; i < r.ranked.size() && i < top; ++i)
    rows.push_back(row(r.ranked[i], fmt::format("{}", r.ranked[i].rank), r, recipe.model.kv_heads));
  if (r.recipe) rows.push_back(row(*r.recipe, "recipe", r, recipe.model.kv_heads));
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& cells : rows)
    for (std::size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], cells[c].size());
  for (const auto& cells : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c + 1 < cells.size(); ++c) line += fmt::format(" {:>{}}", cells[c], width[c]);
    line += "  " + cells.back();
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
  }
  if (r.recipe)
    fmt::print("  the recipe's configuration ranks {} of {}{}\n", r.recipe_rank, r.ranked.size(),
               r.recipe_in_search ? "" : " (outside the search: ranked as if it were in it)");
  else
    fmt::print("  the recipe's configuration is refused: {}\n", r.recipe_refused);
  for (const auto& n : r.notes) print_warning(n);
}

}  // namespace

void add_suggest_options(CLI::App& app, SuggestCliOptions& o) {
  const auto keep = [&o](CLI::Option* opt) {
    o.given.push_back(opt);
    return opt;
  };
  app.add_flag(
      "--suggest", o.suggest,
      "Rank every parallel configuration (nodes, lnc, tp, pp, mbs) the plan accepts by time or cost");
  keep(app.add_option("--nodes-max", o.nodes_max,
                      "With --suggest: the most nodes to consider (default: cluster.nodes)")
           ->type_name("N")
           ->check(CLI::Range(1, 4096)));
  keep(app.add_option("--mbs-max", o.mbs_max,
                      "With --suggest: the largest micro-batch to consider (default 4)")
           ->type_name("N")
           ->check(CLI::Range(1, 1024)));
  keep(app.add_option("--by", o.by, "With --suggest: rank by time or cost to train (default time)")
           ->type_name("time|cost")
           ->check(CLI::IsMember({"time", "cost"})));
  keep(app.add_option("--top", o.top, "With --suggest: how many configurations to show (default 10)")
           ->type_name("K")
           ->check(CLI::Range(1, 1000000)));
  keep(app.add_option("--efficiency", o.efficiency,
                      fmt::format("With --suggest: the share of peak BF16 compute reaches (default {:g})",
                                  default_efficiency))
           ->type_name("F")
           ->check(finite_range(0.01, 1.0)));
  app.add_option("--apply", o.apply, "Write the configuration of rank N of --suggest into the recipe file")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000));
}

bool suggesting(const SuggestCliOptions& o) {
  return o.suggest || o.apply > 0;
}

int run_suggest(const RecipeOptions& recipe_options, const DatasetOptions& dataset_options,
                const SuggestCliOptions& o, bool json) {
  auto recipe = recipe_options.load();
  if (!recipe) {
    return exit_with(recipe.error(), ErrorKind::input);
  }
  auto dataset = dataset_options.size(*recipe);
  if (!dataset) {
    return exit_with(dataset.error(), ErrorKind::input);
  }
  SuggestOptions options;
  options.nodes_max = o.nodes_max;
  options.mbs_max = o.mbs_max;
  options.by = rank_by_named(o.by).value_or(RankBy::time);  // CLI11 checked the name
  options.efficiency = o.efficiency;
  const auto result = suggest(*recipe, *dataset, options);
  if (!result) {
    return exit_with(result.error(), ErrorKind::input);
  }
  std::optional<std::vector<TomlSet>> applied;
  if (o.apply > 0) {
    auto written =
        apply_suggestion(*result, o.apply, *recipe, *dataset,
                         [&recipe_options](std::string_view text, const std::vector<std::string>& keys) {
                           return recipe_options.load_text(text, keys);
                         });
    if (!written) {
      return exit_with(written.error(), ErrorKind::input);
    }
    applied = std::move(*written);
  }
  if (json) {
    auto j = to_json(*result, o.top);
    if (applied) {
      nlohmann::json keys = nlohmann::json::object();
      for (const auto& k : *applied)
        keys[k.section + "." + k.key] = parse_number<std::uint64_t>(k.value).value_or(0);
      j["applied"] = {{"rank", o.apply}, {"file", recipe->source.string()}, {"keys", keys}};
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    print_table(*result, *recipe, o.top);
  }
  if (applied) {
    std::vector<std::string> keys;
    keys.reserve(applied->size());
    for (const auto& k : *applied) keys.push_back(fmt::format("{}.{} = {}", k.section, k.key, k.value));
    if (!json)
      fmt::print("wrote configuration {} into {}: {}\n", o.apply, recipe->source.string(),
                 fmt::join(keys, ", "));
    // What the command line changed beyond those keys stays on the command line.
    const auto overrides = recipe_options.overrides();
    if (overrides)
      for (const auto& ov : *overrides)
        if (std::ranges::none_of(*applied,
                                 [&](const TomlSet& k) { return k.section + "." + k.key == ov.key; }))
          print_warning(fmt::format("{} was given on the command line and is not written into {}",
                                    ov.origin.empty() ? "--set " + ov.key : ov.origin,
                                    recipe->source.string()));
  } else if (!json && !result->ranked.empty()) {
    fmt::print("  write one into the recipe: the same command with --apply RANK\n");
  }
  return exit_ok;
}

}  // namespace trnslurm::cli
