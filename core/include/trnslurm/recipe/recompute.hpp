#pragma once
// The names of [train] ac's values, both ways (recipe.hpp, Recompute).

#include <optional>
#include <string_view>

#include "trnslurm/recipe/recipe.hpp"

namespace trnslurm {

std::string_view to_string(Recompute ac);  // "selective", "full", "none"
std::optional<Recompute> recompute_named(std::string_view name);

}  // namespace trnslurm
