#include "trnslurm/chain/chain_recipe.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/chain/token_count_stage.hpp"
#include "trnslurm/chain/upstream_stage.hpp"
#include "trnslurm/health/node_checks.hpp"
#include "trnslurm/health/resource_checks.hpp"

namespace trnslurm {
namespace fs = std::filesystem;

namespace {

// The train stage's pre-flight (docs/health.md): on by default on a Neuron instance type, off on
// cpu; its checks named as the recipe gives them (checked here, at their file:line:column); the
// disk check sized for one checkpoint of the plan's model.
Result<std::optional<Preflight>> train_preflight(const Recipe& recipe, const StageRecipe& train,
                                                 const nlohmann::json& plan, const TemplateValues& site) {
  const auto* type = recipe.instances.find(recipe.cluster.instance);
  if (!train.preflight.value_or(type != nullptr && !type->cpu())) return std::nullopt;
  Preflight p;
  if (!train.preflight_checks.empty()) {
    auto checks = health::parse_checks(train.preflight_checks, recipe.where("stages.train.preflight_checks"));
    if (!checks) return std::unexpected(checks.error());
    p.checks = fmt::format("{}", fmt::join(*checks, ","));
  }
  const auto bin = site.find("trnslurm_bin");
  p.trnslurm = bin != site.end() ? bin->second : "trnslurm";
  p.max_exclusions = train.max_exclusions;
  p.drain = train.preflight_drain;
  if (plan.contains("memory") && plan.at("memory").contains("parameters") &&
      plan.at("memory").at("parameters").is_number_unsigned())
    p.checkpoint_bytes = health::checkpoint_bytes(plan.at("memory").at("parameters").get<std::uint64_t>());
  return p;
}

}  // namespace

Result<ChainInputs> chain_inputs_from_recipe(const Recipe& recipe, const nlohmann::json& recipe_plan,
                                             std::string chain_id, fs::path run_dir,
                                             const TemplateValues& site) {
  ChainInputs in;
  const auto dirs = chain_dirs(recipe.checkpoint, chain_id);
  const auto plan = with_chain_dirs(recipe_plan, dirs);
  in.chain_id = std::move(chain_id);
  in.run_dir = std::move(run_dir);
  in.slurm = SlurmSettings{recipe.slurm.partition, recipe.slurm.account, recipe.slurm.qos,
                           recipe.slurm.exclusive, recipe.slurm.sbatch_args};

  auto plan_values = values_from_json(plan, "plan");
  if (!plan_values) return std::unexpected(plan_values.error());
  TemplateValues figures;
  for (const auto& [key, value] : *plan_values) {
    if (key.find('.') == std::string::npos) figures.emplace(key, value);
  }
  in.exports = exports_for(figures);
  in.values = recipe.values;
  // {{checkpoint.dir}} is the chain's directory as {{checkpoint_dir}} is: both are exported as
  // TRNSLURM_CHECKPOINT_DIR.
  in.values.insert_or_assign("checkpoint.dir", dirs.checkpoint);
  in.values.insert_or_assign("checkpoint.converted_dir", dirs.converted);
  in.values.insert_or_assign("checkpoint.export_dir", dirs.exported);
  for (auto& [key, value] : *plan_values) in.values.insert_or_assign(key, std::move(value));
  for (const auto& [key, value] : site) in.values.insert_or_assign(key, value);
  if (auto r = render_upstream_paths(recipe, in.values); !r) return std::unexpected(r.error());
  if (auto count = token_count_stage(recipe, plan, in.values)) {
    in.count_prologue = std::move(count->count_prologue);
    in.steps_prologue = std::move(count->steps_prologue);
  }
  // What the upstream stages' words are checked with: every value a job script of the chain has.
  auto check_values = in.values;
  check_values["chain_id"] = in.chain_id;
  check_values["run_dir"] = in.run_dir.string();
  check_values[std::string(newest_checkpoint)] = "";

  // Positions of placeholders are counted in the file as written (the resolved text may be
  // re-serialised when overrides were applied).
  const std::string& file_text = recipe.file_text.empty() ? recipe.text : recipe.file_text;
  for (const auto& stage : recipe.stages) {
    StageInput s;
    s.name = stage.name;
    s.enabled = stage.enabled;
    s.nodes = stage.nodes;
    s.time = stage.time;
    s.command = stage.command;
    s.command_origin = string_value_origin(file_text, stage.command_pos.file, stage.command_pos.line,
                                           stage.command_pos.column);
    if (!stage.script.empty()) {
      check_values["stage"] = stage.name;
      auto command = upstream_command(recipe, stage, check_values);
      if (!command) return std::unexpected(command.error());
      s.command = std::move(command->command);
      s.command_origin = TextOrigin{recipe.where(fmt::format("stages.{}.script", stage.name)), 1, 1};
      s.runtime_values = std::move(command->runtime_values);
    }
    s.env = stage.env;
    if (stage.name == "train") {
      s.resilience = Resilience{stage.max_restarts, stage.signal_grace};
      auto preflight = train_preflight(recipe, stage, plan, site);
      if (!preflight) return std::unexpected(preflight.error());
      s.preflight = std::move(*preflight);
    }
    // The stages that run the job's TP x PP groups across nodes keep them in one UltraServer.
    if (stage.nodes > 1 && plan.contains("placement"))
      for (const auto& arg : plan.at("placement").value("sbatch_args", nlohmann::json::array()))
        if (arg.is_string()) s.sbatch_args.push_back(arg.get<std::string>());
    in.stages.push_back(std::move(s));
  }

  return in;
}

}  // namespace trnslurm
