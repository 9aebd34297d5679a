// `trnslurm plan`: the steps, warmup, parallelism and memory fit of a recipe on its dataset.
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "output.hpp"
#include "plan_suggest.hpp"
#include "recipe_options.hpp"
#include "trnslurm/chain/chain_progress.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/plan/plan.hpp"

namespace trnslurm::cli {

namespace {

void print_table(const Plan& plan, const Recipe& recipe) {
  fmt::print("plan for {} on {} x {} (recipe {})\n",
             recipe.model.name.empty() ? "the model" : recipe.model.name, plan.nodes, plan.instance,
             recipe.source.string());
  const auto lines = explain(plan);
  std::size_t name_width = 0;
  std::size_t value_width = 0;
  for (const auto& l : lines) {
    name_width = std::max(name_width, l.name.size());
    value_width = std::max(value_width, l.value.size());
  }
  for (const auto& l : lines)
    fmt::print("  {:<{}}  {:>{}}  {}\n", l.name, name_width, l.value, value_width, l.from);
  for (const auto& w : plan.warnings) print_warning(w);
}

struct Options {
  RecipeOptions recipe;
  DatasetOptions dataset;
  SuggestCliOptions suggest;
  bool json = false;
  std::string from_run;
  std::string runs_dir;
};

// The wall time and cost at the rate a run measured, in place of the recipe's estimate.
Result<void> use_measured_rate(const Options& o, Plan& plan) {
  const auto runs = o.runs_dir.empty() ? runs_dir_named_by(o.recipe.path) : std::filesystem::path(o.runs_dir);
  auto run_dir = find_run_dir(runs, o.from_run == "latest" ? std::string() : o.from_run);
  if (!run_dir) return std::unexpected(run_dir.error());
  auto rate = measured_rate(*run_dir);
  if (!rate) return std::unexpected(rate.error());
  const double price = plan.cost ? plan.cost->price_per_node_hour : 0.0;
  plan.cost = estimate_cost(plan, rate->tokens_per_second_per_node, price);
  plan.cost->rate_from =
      fmt::format("measured by run {} at step {}", run_dir->filename().string(), rate->step);
  if (rate->figures.seq_len != plan.seq_len || rate->figures.gbs != plan.gbs)
    plan.warnings.push_back(fmt::format(
        "run {} trained seq_len {} and gbs {}, this plan {} and {}: its rate per node may not carry over",
        run_dir->filename().string(), rate->figures.seq_len, rate->figures.gbs, plan.seq_len, plan.gbs));
  return {};
}

int run(const Options& o) {
  if (suggesting(o.suggest)) {
    // The suggestions rank by their own step-time model; a measured rate belongs to one configuration.
    if (!o.from_run.empty()) {
      return exit_with({"--from-run and --suggest both given", "--from-run", "give one of them"},
                       ErrorKind::usage);
    }
    return run_suggest(o.recipe, o.dataset, o.suggest, o.json);
  }
  for (const auto* opt : o.suggest.given)
    if (opt->count() > 0) {
      return exit_with({fmt::format("{} needs --suggest", opt->get_name()), opt->get_name(),
                        "add --suggest, or leave the option out"},
                       ErrorKind::usage);
    }
  auto planned = load_and_plan(o.recipe, o.dataset);
  if (!planned) {
    return exit_with(planned.error(), ErrorKind::input);
  }
  if (!o.from_run.empty()) {
    if (auto used = use_measured_rate(o, planned->plan); !used) {
      return exit_with(used.error(), ErrorKind::input);
    }
  }
  if (o.json) {
    fmt::print("{}\n", to_json(planned->plan).dump(2));
  } else {
    print_table(planned->plan, planned->recipe);
  }
  return exit_ok;
}

}  // namespace

Command add_plan(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("plan",
                                 "Steps per epoch, total steps, warmup and memory fit of a recipe; --suggest "
                                 "ranks parallel configurations");
  add_recipe_options(*sub, opts->recipe);
  sub->add_flag("--json", opts->json, "Print the plan as JSON");
  add_dataset_options(*sub, opts->dataset);
  sub->add_option(
      "--from-run", opts->from_run,
      "Estimate wall time and cost at the throughput chain CHAIN measured ('latest': the newest)");
  sub->add_option(
      "--runs-dir", opts->runs_dir,
      "Where --from-run looks for run directories (default: run.runs_dir of the recipe, else ./runs)");
  add_suggest_options(*sub, opts->suggest);
  sub->footer(
      "Exit codes: 0 planned (warnings on stderr), 2 bad recipe, option or dataset.\n"
      "Examples:\n"
      "  trnslurm plan                            # count the dataset at dataset.path\n"
      "  trnslurm plan --samples 1000000 --nodes 8 --epochs 3\n"
      "  trnslurm plan -r llama.toml --set train.tp=32 --json | jq .total_steps\n"
      "  trnslurm plan --from-run latest --epochs 10   # wall time at the rate the newest run measured\n"
      "  trnslurm plan --samples 1000000 --suggest --nodes-max 64 --by cost --top 5\n"
      "  trnslurm plan --samples 1000000 --suggest --apply 1   # write the first into the recipe");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
