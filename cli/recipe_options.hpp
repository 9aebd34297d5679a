#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::cli {

// The recipe options every recipe-reading command shares: -r/--recipe, --set, --nodes,
// --epochs, --dataset. Bind them with add_recipe_options, then call load().
struct RecipeOptions {
  std::string path = "trnslurm.toml";
  std::vector<std::string> sets;
  std::string nodes;
  std::string epochs;
  std::string dataset;

  // The recipe with the overrides applied (--nodes, --epochs, --dataset, then each --set).
  Result<Recipe> load() const;
  // The same from a recipe text meant for the file at `path`, without the overrides of the keys
  // in `skipped` ("train.tp"): what the file says once those keys are written into it.
  Result<Recipe> load_text(std::string_view text, const std::vector<std::string>& skipped) const;
  // The overrides, in the order they apply.
  Result<std::vector<Override>> overrides() const;
};

void add_recipe_options(CLI::App& app, RecipeOptions& options);

// Where the plan's dataset size comes from: --samples N or --tokens N given on the command line,
// else the recipe's dataset.path counted from its headers (--verify: a full pass).
struct DatasetOptions {
  std::string samples;
  std::string tokens;
  bool verify = false;

  Result<DatasetSize> size(const Recipe& recipe) const;
  // size(), then make_plan: what `plan` prints and `submit` renders.
  Result<Plan> plan(const Recipe& recipe) const;
};

// The recipe the options name and its plan: where `plan` and `submit` start.
struct PlannedRecipe {
  Recipe recipe;
  Plan plan;
};
Result<PlannedRecipe> load_and_plan(const RecipeOptions& recipe, const DatasetOptions& dataset);

void add_dataset_options(CLI::App& app, DatasetOptions& options);

// A plan whose UltraServer constraint names a feature prefix ("us*"): the prefix expanded from
// the features the cluster's nodes have (sinfo), or, without them, a warning and no constraint.
void expand_placement(Plan& plan);

}  // namespace trnslurm::cli
