#pragma once
// The installed trainer asked about its own command line (docs/upstream.md, "Checked against the
// installed trainer"): `doctor --recipe` runs it.

#include <string>
#include <vector>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::cli {

struct TrainerCheck {
  bool asked = false;                   // false: the recipe has no upstream train script to ask
  std::string where;                    // "a compute node (srun)" or "this host"
  std::vector<std::string> not_listed;  // the train stage's options the installed --help lacks
};
// Runs the recipe's `python -m <train module> --help` in its venv on a compute node (srun,
// --immediate: an allocation that cannot start in 30 s gives up), else on this host where the venv
// is; an error when neither answers.
Result<TrainerCheck> check_installed_trainer(const Recipe& recipe);

}  // namespace trnslurm::cli
