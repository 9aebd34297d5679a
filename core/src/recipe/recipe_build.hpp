#pragma once
// Parsed TOML (overrides applied) -> a checked Recipe.

#include <toml++/toml.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// A path written in a recipe, taken from `base_dir` (the recipe's directory; "" for the current
// one): absolute and normalised. Empty values, URLs ("s3://..."), absolute paths and values that
// start with a placeholder ("{{backend_dir}}/...", known when the chain is rendered) stay as they are.
std::string path_from(const std::filesystem::path& base_dir, const std::string& value);

// The recipe's values that are paths, by "section.key".
std::vector<std::pair<std::string_view, std::string*>> path_fields(Recipe& recipe);

// `overridden`: "section.key" -> the option that set it (errors name it instead of a line).
// `instances`: the types known before the recipe's own [instances] tables.
Result<Recipe> build_recipe(toml::table& root, const std::string& file,
                            std::map<std::string, std::string> overridden, const InstanceTable& instances);

}  // namespace trnslurm
