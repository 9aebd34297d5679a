#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "trnslurm/chain/chain_render.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// A chain's inputs from a recipe (contract 2) and its plan as JSON (contract 3, to_json(plan)):
// the stages and Slurm settings of the recipe; as placeholders every key of the plan's JSON
// ("total_steps", "memory.total_bytes") and every scalar of the resolved recipe ("train.lr");
// the plan's top-level figures exported as TRNSLURM_<KEY>; and `site`'s values (backend_dir),
// which upstream.root and upstream.venv may name. Stages with a `script` get their command here
// (upstream_command). The checkpoint, converted and export directories are the chain's own
// (chain_dirs), in the plan's keys and the recipe's alike.
Result<ChainInputs> chain_inputs_from_recipe(const Recipe& recipe, const nlohmann::json& plan,
                                             std::string chain_id, std::filesystem::path run_dir,
                                             const TemplateValues& site = {});

}  // namespace trnslurm
