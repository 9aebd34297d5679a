#pragma once
// `plan --suggest --apply N`: a ranked configuration written into the recipe's file
// (docs/plan.md, "Suggestions").

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/plan/suggest.hpp"
#include "trnslurm/util/toml_edit.hpp"

namespace trnslurm {

// The recipe keys a configuration sets: cluster.nodes, cluster.lnc where the instance type offers
// a choice, train.tp, pp and mbs.
std::vector<TomlSet> suggestion_keys(const Suggestion& s, const InstanceType& type);

// The recipe loaded from the text about to be written, as the caller loaded it (a command line's
// other overrides), without overriding the keys `written`: they are the ones being written.
using RecipeReload =
    std::function<Result<Recipe>(std::string_view text, const std::vector<std::string>& written)>;

// Writes configuration `rank` (1-based) of `result` into the recipe's file and returns the keys
// written. Refused, the file untouched: no such rank, a configuration that does not fit, a recipe
// without a file, a file changed since it was read, or a text that does not plan back to the same
// nodes, LNC, TP, PP and MBS.
Result<std::vector<TomlSet>> apply_suggestion(const SuggestResult& result, std::size_t rank,
                                              const Recipe& recipe, const DatasetSize& dataset,
                                              const RecipeReload& reload);

}  // namespace trnslurm
