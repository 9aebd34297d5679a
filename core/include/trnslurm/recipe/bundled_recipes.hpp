#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trnslurm {

// A recipe compiled into the binary from recipes/NAME.toml (cmake/BundleRecipes.cmake).
struct BundledRecipe {
  std::string_view name;     // file name without .toml: what `trnslurm init NAME` takes
  std::string_view summary;  // the recipe's first comment line
  std::string_view text;     // the whole TOML text
};

std::vector<BundledRecipe> bundled_recipes();
const BundledRecipe* find_bundled_recipe(std::string_view name);

namespace detail {
struct BundledRecipeText {
  std::string_view name;
  std::string_view text;
};
// Defined in the generated bundled_recipes_data.cpp.
std::span<const BundledRecipeText> bundled_recipe_texts();
}  // namespace detail

}  // namespace trnslurm
