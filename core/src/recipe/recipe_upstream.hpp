#pragma once
// The stages that run upstream scripts (docs/recipe.md, "Upstream stages"): their arguments
// checked against the interface record of the release the recipe names, and the precompile
// stage derived from the train stage.

#include <string_view>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// Splits every `args` (and `compile_args`) of the recipe into words, checks each stage that
// names a `script` against the interface record of [upstream] package and release as the
// script's own argument parsing would read it, and derives the precompile stage when it names
// neither a command nor a script. `file_text` is the recipe as written (positions count in it).
Result<void> check_upstream_stages(Recipe& recipe, std::string_view file_text);

}  // namespace trnslurm
