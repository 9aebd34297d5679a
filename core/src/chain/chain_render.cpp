#include "trnslurm/chain/chain_render.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/chain/job_script.hpp"

namespace trnslurm {

Result<ChainSpec> render_chain(const ChainInputs& in) {
  std::vector<StageSpec> stages;
  const bool resumed = !in.resume_from.empty();
  const auto convert = stage_names.front();
  if (resumed && (in.selection.only == convert || in.selection.from == convert))
    return fail(
        "a chain resumed from a checkpoint has no convert stage: its train stage starts from the checkpoint",
        "--resume-from", "leave out --only convert / --from convert");
  for (const auto& s : in.stages) {
    if (!s.enabled || (resumed && s.name == convert)) continue;
    if (s.nodes == 0) {
      return fail(fmt::format("stage {} asks for 0 nodes", s.name), s.command_origin.file,
                  fmt::format("set stages.{}.nodes to 1 or more", s.name));
    }
    auto args = s.resilience ? resilience_sbatch_args(*s.resilience) : std::vector<std::string>{};
    args.insert(args.end(), s.sbatch_args.begin(), s.sbatch_args.end());
    stages.push_back(StageSpec{s.name, {}, s.nodes, s.time, std::move(args), {}});
  }
  if (stages.empty()) {
    return fail("every stage is disabled", "recipe", "enable at least one [stages.*] table (enabled = true)");
  }
  auto selected = select_stages(std::move(stages), in.selection);
  if (!selected) return std::unexpected(selected.error());

  ChainSpec chain{in.chain_id, in.run_dir, in.slurm, std::move(*selected)};
  auto values = in.values;
  values["chain_id"] = in.chain_id;
  values["run_dir"] = in.run_dir.string();
  if (resumed) values["resume_from"] = in.resume_from;
  for (auto& stage : chain.stages) {
    const bool first = &stage == &chain.stages.front();
    const auto& src = *std::find_if(in.stages.begin(), in.stages.end(),
                                    [&](const StageInput& s) { return s.name == stage.name; });
    values["stage"] = stage.name;
    auto stage_values = values;
    for (const auto& name : src.runtime_values) stage_values[name] = "";
    // The token count runs first in the chain's first job: the jobs after it wait for it (afterok).
    auto prologue = resumed ? resume_prologue() : std::string();
    if (first) prologue += in.count_prologue;
    if (stage.name == "train") prologue += in.steps_prologue;
    ScriptInput script{in.chain_id,
                       stage.name,
                       in.run_dir,
                       src.command,
                       src.command_origin,
                       src.env,
                       fmt::format("stages.{}.env", stage.name),
                       std::move(stage_values),
                       in.exports,
                       src.resilience,
                       src.preflight,
                       src.runtime_values,
                       std::move(prologue),
                       std::nullopt,
                       in.host};
    if (stage.name == "precompile" || stage.name == "train") script.compile_cache = in.compile_cache;
    auto text = render_job_script(script);
    if (!text) return std::unexpected(text.error());
    stage.script = std::move(*text);
  }
  return chain;
}

}  // namespace trnslurm
