#pragma once
// `--set section.key=value` (and --nodes, --epochs, --dataset) applied to the parsed TOML
// before the recipe is read, so an override is checked exactly as the file's value would be.

#include <toml++/toml.h>

#include <string>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// How errors name an override: its option ("--nodes") or "--set section.key".
std::string origin_of(const Override& o);

// Applies one override to the table; returns the path it set.
Result<std::string> apply_override(toml::table& root, const Override& o);

}  // namespace trnslurm
