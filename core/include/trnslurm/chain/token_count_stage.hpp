#pragma once
// The token-count stage of a TorchTitan chain (docs/plan.md, "Steps from the token count"):
// TorchTitan tokenizes text on the fly, so the steps of an epoch follow from the corpus's token
// count under the model's own tokenizer. Until that count is cached (dataset/token_count.hpp) or
// the recipe states it, the chain's first job counts it on a compute node (never the head node)
// with the trainer's tokenizer class, in the recipe's venv, and the train job takes its steps from
// it: `trnslurm steps` makes the plan again there, so the arithmetic stays in one place.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

struct TokenCountStage {
  std::string count_prologue;  // templates, for ChainInputs
  std::string steps_prologue;
};

// nullopt when the plan's steps need no count: a corpus that is not text, a stated count, or a
// count already cached (the plan's "dataset_source" is not "estimate"). Adds to `values` what the
// templates use besides the plan's and the recipe's values (recipe_dir).
std::optional<TokenCountStage> token_count_stage(const Recipe& recipe, const nlohmann::json& plan,
                                                 TemplateValues& values);

// The counting program (core/src/chain/scripts/count_tokens.py), run by the job from stdin.
std::string_view count_tokens_program();

}  // namespace trnslurm
