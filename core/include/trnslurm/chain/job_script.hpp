#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trnslurm/util/error.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

// A train stage that checkpoints on a signal and is requeued (docs/resilience.md).
struct Resilience {
  std::uint32_t max_restarts = 3;
  std::uint32_t signal_grace = 120;  // seconds before the time limit; 0 = no signal asked for
};

// The train stage's pre-flight on its own nodes (docs/health.md), run by `trnslurm preflight`
// from the wrapper before the command, at every start.
struct Preflight {
  std::string trnslurm;  // the trnslurm binary the job runs (the one that submitted)
  std::string checks;    // comma-separated; "" = every node check
  std::uint32_t max_exclusions = 2;
  bool drain = true;  // false: the pre-flight does not ask the plugin to drain (the recipe opts out)
  std::uint64_t checkpoint_bytes = 0;  // one checkpoint of the plan's model
};

// The sbatch arguments that go with it: --requeue, --open-mode=append, --signal=B:USR1@<grace>.
std::vector<std::string> resilience_sbatch_args(const Resilience& r);

// The compile cache a precompile or train stage uses (docs/cache.md): the chain's compile key,
// where its graphs go (NEURON_COMPILE_CACHE_URL), and the marker a successful precompile writes.
struct CompileCacheUse {
  std::string key;
  std::string url;
  std::filesystem::path marker;
  // Precompile: end at once when the marker exists when the job starts (--precompile=auto).
  bool skip_when_warm = true;
};

// Where a stage's script runs. A Slurm batch job gets the outcome record and, for train, the
// signal/requeue wrapper, both of which ask Slurm; a container another scheduler starts
// (`trnslurm export`, docs/export.md) gets neither: that scheduler's own retry takes their place.
enum class JobHost { slurm, container };

// What one stage's job script is made of.
struct ScriptInput {
  std::string chain_id;
  std::string stage;
  std::filesystem::path run_dir;
  std::string command;                     // the recipe's template
  TextOrigin command_origin;               // where it starts in the recipe
  std::map<std::string, std::string> env;  // KEY -> template (rendered raw, then quoted whole)
  std::string env_where;                   // the recipe table, for errors: "stages.train.env"
  TemplateValues values;                   // every placeholder
  // Exported before the command, e.g. TRNSLURM_TOTAL_STEPS: the plan's figures.
  std::vector<std::pair<std::string, std::string>> exports;
  // Set for the train stage: the command runs inside the signal/requeue wrapper.
  std::optional<Resilience> resilience;
  // With resilience: the pre-flight the wrapper runs first (none = off).
  std::optional<Preflight> preflight;
  // Placeholders the command sets itself when it runs (newest_checkpoint): not exported.
  std::vector<std::string> runtime_values;
  // trnslurm's own template, run before the command (resume_prologue, chain/chain_dirs.hpp).
  std::string prologue;
  // Exported for the precompile and train stages; the precompile stage also checks it first and
  // records the key after its command succeeded (scripts/precompile_cache.sh).
  std::optional<CompileCacheUse> compile_cache;
  JobHost host = JobHost::slurm;
};

// A bash script: `set -eo pipefail`, the chain's variables, the exports and the stage's env,
// every value shell-quoted, then the rendered command. Refuses values that cannot be quoted.
// For JobHost::container: no outcome record, no wrapper, no compile-cache guard.
Result<std::string> render_job_script(const ScriptInput& in);

// Every scalar of a JSON object (numbers, strings, booleans) as text, by key. Nested objects
// give "outer.inner" keys; arrays and nulls are left out.
Result<TemplateValues> values_from_json(const nlohmann::json& object, const std::string& where);
// TRNSLURM_<KEY> for each top-level key (upper case, '.' -> '_').
std::vector<std::pair<std::string, std::string>> exports_for(const TemplateValues& values,
                                                             std::string_view prefix = "TRNSLURM_");

}  // namespace trnslurm
