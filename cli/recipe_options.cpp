#include "recipe_options.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace trnslurm::cli {

void add_recipe_options(CLI::App& app, RecipeOptions& options) {
  app.add_option("-r,--recipe", options.path, "Recipe file (default: ./trnslurm.toml)");
  app.add_option("--set", options.sets, "Override a recipe value: section.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--nodes", options.nodes, "Override cluster.nodes")->type_name("N");
  app.add_option("--epochs", options.epochs, "Override train.epochs")->type_name("E");
  app.add_option("--dataset", options.dataset, "Override dataset.path")->type_name("PATH");
}

Result<Recipe> RecipeOptions::load() const {
  std::vector<Override> overrides;
  if (!nodes.empty()) overrides.push_back({"cluster.nodes", nodes, "--nodes"});
  if (!epochs.empty()) overrides.push_back({"train.epochs", epochs, "--epochs"});
  if (!dataset.empty()) overrides.push_back({"dataset.path", dataset, "--dataset"});
  for (const auto& text : sets) {
    auto o = parse_override(text);
    if (!o) return std::unexpected(o.error());
    overrides.push_back(std::move(*o));
  }
  return load_recipe(path, overrides);
}

void print_error(const Error& error) {
  std::string line = "trnslurm: ";
  if (!error.where.empty()) line += error.where + ": ";
  line += error.what + "\n";
  if (!error.hint.empty()) line += "  hint: " + error.hint + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace trnslurm::cli
