#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

// One stage as the recipe describes it (contract 2), before rendering.
struct StageInput {
  std::string name;
  bool enabled = true;
  std::uint32_t nodes = 1;
  std::string time;
  std::string command;  // template
  TextOrigin command_origin;
  std::map<std::string, std::string> env;
  std::optional<Resilience> resilience;     // the train stage's (docs/resilience.md)
  std::optional<Preflight> preflight;       // the train stage's, when on (docs/health.md)
  std::vector<std::string> sbatch_args;     // this stage's own: the UltraServer placement of the plan
  std::vector<std::string> runtime_values;  // placeholders the job script sets when it runs
};

// Everything a chain is rendered from: the recipe's stages and Slurm settings, and the
// placeholder values (the plan's JSON keys, the recipe's "section.key" values).
struct ChainInputs {
  std::string chain_id;
  std::filesystem::path run_dir;
  SlurmSettings slurm;
  std::vector<StageInput> stages;
  TemplateValues values;  // every {{placeholder}}; chain_id and run_dir are added
  std::vector<std::pair<std::string, std::string>> exports;  // TRNSLURM_* figures of the plan
  StageSelection selection;
  // submit --resume-from: the checkpoint directory every stage after convert starts from
  // (resume_prologue, chain/chain_dirs.hpp); the convert stage is then left out.
  std::string resume_from;
  // The precompile and train stages' compile cache (cache/compile_key.hpp), when the recipe keeps one.
  std::optional<CompileCacheUse> compile_cache;
  // The token-count stage (docs/plan.md): set when the plan's steps wait for the corpus's token
  // count. The chain's first job counts (count_prologue), the train job takes its steps from the
  // count (steps_prologue): both templates of chain/token_count_stage.hpp.
  std::string count_prologue;
  std::string steps_prologue;
  // Where the scripts run: Slurm's batch jobs, or the containers `trnslurm export` hands to
  // another scheduler (chain/job_script.hpp).
  JobHost host = JobHost::slurm;
};

// Renders every enabled, selected stage's script. Refuses a chain with no stage, a stage with 0
// nodes, a resumed chain whose selection names the convert stage, and everything
// render_job_script refuses.
Result<ChainSpec> render_chain(const ChainInputs& in);

}  // namespace trnslurm
