#include "recipe_options.hpp"

#include "process.hpp"
#include "site_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "trnslurm/plan/trainer_rule.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::cli {

void add_recipe_options(CLI::App& app, RecipeOptions& options) {
  app.add_option("-r,--recipe", options.path, "Recipe file (default: ./trnslurm.toml)")->type_name("PATH");
  app.add_option("--set", options.sets, "Override a recipe value: section.key=value (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  app.add_option("--nodes", options.nodes, "Override cluster.nodes")->type_name("N");
  app.add_option("--epochs", options.epochs, "Override train.epochs")->type_name("E");
  app.add_option("--dataset", options.dataset, "Override dataset.path")->type_name("PATH");
}

Result<std::vector<Override>> RecipeOptions::overrides() const {
  std::vector<Override> out;
  if (!nodes.empty()) out.push_back({"cluster.nodes", nodes, "--nodes"});
  if (!epochs.empty()) out.push_back({"train.epochs", epochs, "--epochs"});
  if (!dataset.empty()) out.push_back({"dataset.path", dataset, "--dataset"});
  for (const auto& text : sets) {
    auto o = parse_override(text);
    if (!o) return std::unexpected(o.error());
    out.push_back(std::move(*o));
  }
  return out;
}

Result<Recipe> RecipeOptions::load() const {
  auto list = overrides();
  if (!list) return std::unexpected(list.error());
  // The site's instance types: the file the plugin reads (plugstack instances=), when there is one.
  auto instances = site_instance_table(load_site_config(std::nullopt));
  if (!instances) return std::unexpected(instances.error());
  return load_recipe(path, *list, *instances);
}

Result<Recipe> RecipeOptions::load_text(std::string_view text,
                                        const std::vector<std::string>& skipped) const {
  auto list = overrides();
  if (!list) return std::unexpected(list.error());
  std::erase_if(*list, [&](const Override& o) { return std::ranges::find(skipped, o.key) != skipped.end(); });
  auto instances = site_instance_table(load_site_config(std::nullopt));
  if (!instances) return std::unexpected(instances.error());
  auto recipe = load_recipe_text(text, path, *list, *instances);
  if (recipe) recipe->source = path;
  return recipe;
}

void add_dataset_options(CLI::App& app, DatasetOptions& options) {
  app.add_option("--samples", options.samples,
                 "Dataset size in samples (rows), instead of reading the dataset")
      ->type_name("N");
  app.add_option("--tokens", options.tokens,
                 "Dataset size in tokens: samples = (N - 1) // seq_len (NxD, Megatron), N // (seq_len + 1) "
                 "(TorchTitan)")
      ->type_name("N");
  app.add_flag("--verify", options.verify, "Read every token offset of the dataset, not only its headers");
}

namespace {
Result<std::uint64_t> parse_count(const std::string& text, const char* option) {
  const auto v = parse_number<std::uint64_t>(text);
  if (!v) return fail(fmt::format("'{}' is not a count", text), option, "give a non-negative integer");
  return *v;
}
}  // namespace

Result<DatasetSize> DatasetOptions::size(const Recipe& recipe) const {
  if (!samples.empty() && !tokens.empty())
    return fail("--samples and --tokens both given", "--tokens", "give one of them");
  if (!samples.empty()) {
    auto n = parse_count(samples, "--samples");
    if (!n) return std::unexpected(n.error());
    DatasetSize given;
    given.samples = *n;
    given.format = "given";
    return given;
  }
  if (!tokens.empty()) {
    auto n = parse_count(tokens, "--tokens");
    if (!n) return std::unexpected(n.error());
    auto size = trainer_rule(recipe.upstream.trainer).from_tokens(*n, recipe.model.seq_len);
    if (size) size->basis = "given on the command line (--tokens)";
    return size;
  }
  return count_recipe_dataset(recipe, verify);
}

Result<PlannedRecipe> load_and_plan(const RecipeOptions& recipe, const DatasetOptions& dataset) {
  auto loaded = recipe.load();
  if (!loaded) return std::unexpected(loaded.error());
  auto plan = dataset.plan(*loaded);
  if (!plan) return std::unexpected(plan.error());
  return PlannedRecipe{std::move(*loaded), std::move(*plan)};
}

Result<Plan> DatasetOptions::plan(const Recipe& recipe) const {
  auto counted = size(recipe);
  if (!counted) return std::unexpected(counted.error());
  auto plan = make_plan(recipe, *counted);
  if (plan) expand_placement(*plan);
  return plan;
}

void expand_placement(Plan& plan) {
  auto& p = plan.placement;
  if (p.method != "constraint" || !p.sbatch_args.empty() || p.features.empty()) return;
  // A feature prefix ("us*") stands for the features the cluster's nodes have.
  auto listed = run_process(node_features_argv());
  Result<std::string> arg = fail("", "");
  if (!listed) {
    arg = fail(listed.error().what, "sinfo");
  } else if (listed->exit_code != 0) {
    // sinfo's last line says why (the ones before are its retries).
    std::string_view why = listed->err;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.remove_suffix(1);
    if (const auto nl = why.rfind('\n'); nl != std::string_view::npos) why.remove_prefix(nl + 1);
    arg = fail(std::string(why), "sinfo");
  } else {
    arg = constraint_arg(p.features, parse_node_features(listed->out));
  }
  if (arg) {
    p.sbatch_args = {*arg};
    return;
  }
  p.method = "none";
  p.why += fmt::format("; not requested: the node features for {} could not be listed",
                       fmt::join(p.features, ", "));
  plan.warnings.push_back(fmt::format("no UltraServer constraint requested: {}", to_string(arg.error())));
}

}  // namespace trnslurm::cli
