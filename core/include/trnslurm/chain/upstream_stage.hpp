#pragma once
// A stage that runs an upstream script (docs/recipe.md, "Upstream stages"): its command, and
// the files it needs on the cluster.

#include <string>
#include <vector>

#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

// The placeholder a convert-back stage names the newest completed checkpoint by: the job
// script finds it when it runs (`<checkpoint_dir>/step_<n>` with the highest n that has `done`).
inline constexpr std::string_view newest_checkpoint = "newest_checkpoint";

struct UpstreamCommand {
  std::string command;                      // a template, as a recipe's `command` is
  std::vector<std::string> runtime_values;  // placeholders the job script sets itself
};

// The command of a stage with a `script`: the venv's bin/ first on PATH, then torchrun on every
// node (through srun; neuron_parallel_compile before it for a derived precompile stage) or
// python3, the script under upstream.root and its words, each quoted. Every placeholder of the
// words must be in `values`; a flag's rendered value must be one upstream reads as meant
// (upstream::check_value), else the error names the word's file:line:column.
Result<UpstreamCommand> upstream_command(const Recipe& recipe, const StageRecipe& stage,
                                         const TemplateValues& values);

// The files the recipe's enabled upstream stages run, with `values` rendered into upstream.root
// and upstream.venv: the scripts under root, and python3, torchrun and neuron_parallel_compile
// in venv/bin/ where a venv is set. A missing one is an error saying where to get it.
Result<void> check_upstream_files(const Recipe& recipe, const TemplateValues& values);

// upstream.root and upstream.venv with their placeholders ({{backend_dir}}) rendered.
Result<void> render_upstream_paths(const Recipe& recipe, TemplateValues& values);

}  // namespace trnslurm
