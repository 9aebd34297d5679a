// `trnslurm plan`: the steps, warmup, parallelism and memory fit of a recipe on its dataset.
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "output.hpp"
#include "recipe_options.hpp"
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
  bool json = false;
};

int run(const Options& o) {
  const auto planned = load_and_plan(o.recipe, o.dataset);
  if (!planned) {
    print_error(planned.error());
    return exit_usage;
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
  auto* sub = app.add_subcommand("plan", "Steps per epoch, total steps, warmup and memory fit of a recipe");
  add_recipe_options(*sub, opts->recipe);
  sub->add_flag("--json", opts->json, "Print the plan as JSON");
  add_dataset_options(*sub, opts->dataset);
  sub->footer(
      "Exit codes: 0 planned (warnings on stderr), 2 bad recipe, option or dataset.\n"
      "Examples:\n"
      "  trnslurm plan                            # count the dataset at dataset.path\n"
      "  trnslurm plan --samples 1000000 --nodes 8 --epochs 3\n"
      "  trnslurm plan -r llama.toml --set train.tp=32 --json | jq .total_steps");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
