// `trnslurm plan`: the steps, warmup, parallelism and memory fit of a recipe on its dataset.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>

#include "commands.hpp"
#include "recipe_options.hpp"
#include "trnslurm/plan.hpp"

namespace trnslurm::cli {

namespace {
struct PlanArgs {
  RecipeOptions recipe;
  bool json = false;
  std::string samples;
  std::string tokens;
};

Result<std::uint64_t> parse_count(const std::string& text, const char* option) {
  std::uint64_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc{} || ptr != end || text.empty())
    return fail(fmt::format("'{}' is not a count", text), option, "give a non-negative integer");
  return v;
}

Result<DatasetSize> dataset_size(const PlanArgs& args, const Recipe& recipe) {
  if (!args.samples.empty() && !args.tokens.empty())
    return fail("--samples and --tokens both given", "--tokens", "give one of them");
  if (!args.samples.empty()) {
    auto n = parse_count(args.samples, "--samples");
    if (!n) return std::unexpected(n.error());
    return DatasetSize{*n, std::nullopt, "given"};
  }
  if (!args.tokens.empty()) {
    auto n = parse_count(args.tokens, "--tokens");
    if (!n) return std::unexpected(n.error());
    return dataset_size_from_tokens(*n, recipe.model.seq_len);
  }
  return fail("this build cannot count datasets yet", recipe.where("dataset.path"),
              "give the size with --samples N (rows) or --tokens N (Megatron tokens)");
}

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
  for (const auto& w : plan.warnings) fmt::print(stderr, "warning: {}\n", w);
}
}  // namespace

Command add_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* sub = app.add_subcommand("plan", "Steps per epoch, total steps, warmup and memory fit of a recipe");
  add_recipe_options(*sub, args->recipe);
  sub->add_flag("--json", args->json, "Print the plan as JSON");
  sub->add_option("--samples", args->samples,
                  "Dataset size in samples (rows), instead of reading the dataset")
      ->type_name("N");
  sub->add_option("--tokens", args->tokens, "Dataset size in tokens (Megatron): samples = (N - 1) // seq_len")
      ->type_name("N");
  sub->footer("Exit codes: 0 planned (warnings on stderr), 2 bad recipe, option or dataset.");
  return {sub, [args] {
            auto recipe = args->recipe.load();
            if (!recipe) {
              print_error(recipe.error());
              return exit_usage;
            }
            auto size = dataset_size(*args, *recipe);
            if (!size) {
              print_error(size.error());
              return exit_usage;
            }
            auto plan = make_plan(*recipe, *size);
            if (!plan) {
              print_error(plan.error());
              return exit_usage;
            }
            if (args->json) {
              fmt::print("{}\n", to_json(*plan).dump(2));
            } else {
              print_table(*plan, *recipe);
            }
            return exit_ok;
          }};
}

}  // namespace trnslurm::cli
