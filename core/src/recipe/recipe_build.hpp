#pragma once
// Parsed TOML (overrides applied) -> a checked Recipe.

#include <toml++/toml.h>

#include <map>
#include <string>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// `overridden`: "section.key" -> the option that set it (errors name it instead of a line).
Result<Recipe> build_recipe(toml::table& root, const std::string& file,
                            std::map<std::string, std::string> overridden);

}  // namespace trnslurm
