#pragma once
// `trnslurm plan --suggest` and `--apply N`: the options and the table; the write into the recipe is
// the core's (plan/suggest_apply.hpp).

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "recipe_options.hpp"
#include "trnslurm/plan/suggest.hpp"

namespace trnslurm::cli {

struct SuggestCliOptions {
  bool suggest = false;
  std::uint32_t nodes_max = 0;
  std::uint64_t mbs_max = 4;
  std::string by = "time";
  std::size_t top = 10;
  double efficiency = default_efficiency;
  std::size_t apply = 0;  // 0: print only
  // The options given, for "--top needs --suggest".
  std::vector<const CLI::Option*> given;
};

void add_suggest_options(CLI::App& app, SuggestCliOptions& options);

// True when --suggest or --apply was given (the other suggest options need one of them).
bool suggesting(const SuggestCliOptions& options);

int run_suggest(const RecipeOptions& recipe, const DatasetOptions& dataset, const SuggestCliOptions& options,
                bool json);

}  // namespace trnslurm::cli
