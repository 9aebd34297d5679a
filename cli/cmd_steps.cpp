// `trnslurm steps` (hidden): run by a TorchTitan chain's train job on a compute node when the
// chain counts its corpus's tokens (docs/plan.md, "Steps from the token count"). It makes the
// plan again from the run's recipe, which now finds the count the chain's first job cached, prints
// its figures as `export TRNSLURM_...=...` lines for the job to eval, and brings the run's
// plan.json up to date (status, watch and report read their totals there).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>

#include "commands.hpp"
#include "output.hpp"
#include "recipe_options.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string run_dir;
  std::string recipe_dir;  // where the submitted recipe lived: its relative paths start there
};

// The chain's own directories, which the plan names for the recipe as a whole.
constexpr std::array<std::string_view, 3> chain_keys{"checkpoint_dir", "converted_dir", "export_dir"};

int run(const Options& o) {
  const fs::path run_dir(o.run_dir);
  const auto text = read_file(run_dir / "recipe.toml", std::size_t{1} << 20);
  const auto plan_text = read_file(run_dir / "plan.json", std::size_t{1} << 20);
  if (!text || !plan_text) {
    return exit_with(
        {"cannot read the run's recipe.toml and plan.json", run_dir.string(), "is it a run directory?"},
        ErrorKind::input);
  }
  RecipeOptions recipe_options;
  recipe_options.path = (fs::path(o.recipe_dir) / "recipe.toml").string();
  auto recipe = recipe_options.load_text(*text, {});
  if (!recipe) {
    return exit_with(recipe.error(), ErrorKind::input);
  }
  auto plan = DatasetOptions{}.plan(*recipe);
  if (!plan) {
    return exit_with(plan.error(), ErrorKind::input);
  }
  const auto fresh = to_json(*plan);
  if (fresh.value("dataset_source", "") == "estimate") {
    return exit_with(
        {"the corpus's tokens are not counted yet", fresh.value("token_count_file", run_dir.string()),
         "the chain's first job counts them: see its log (trnslurm logs)"},
        ErrorKind::refused);
  }
  auto recorded = nlohmann::json::parse(*plan_text, nullptr, false);
  if (!recorded.is_object()) {
    return exit_with({"the run's plan.json is not JSON", (run_dir / "plan.json").string(), ""},
                     ErrorKind::input);
  }
  // Every figure, not only those that differ from plan.json: a requeued train job runs this again
  // after the first attempt brought plan.json up to date, and its script still holds the estimate.
  std::vector<std::pair<std::string, std::string>> figures;
  for (const auto& [key, value] : fresh.items()) {
    if (std::ranges::find(chain_keys, key) != chain_keys.end()) continue;
    if (value.is_number() || value.is_string() || value.is_boolean())
      figures.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
    recorded[key] = value;
  }
  if (auto w = write_file_atomic(run_dir / "plan.json", recorded.dump(2) + "\n"); !w) {
    return exit_with(w.error(), ErrorKind::local);
  }
  for (const auto& [name, value] : exports_for(TemplateValues(figures.begin(), figures.end()))) {
    auto quoted = shell_quote(value);
    if (!quoted) {
      return exit_with(quoted.error(), ErrorKind::local);
    }
    fmt::print("export {}={}\n", name, *quoted);
  }
  fmt::print(stderr, "trnslurm: {} steps from {} tokens ({})\n", fresh.value("total_steps", 0),
             fresh.value("tokens", nlohmann::json()).dump(), fresh.value("tokens_basis", "?"));
  return exit_ok;
}

}  // namespace

Command add_steps(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("steps", "A chain's steps from its corpus's token count (run by its train job)");
  sub->group("");  // hidden: run by trnslurm's job scripts on a compute node
  sub->add_option("--run-dir", opts->run_dir, "The chain's run directory")->required();
  sub->add_option("--recipe-dir", opts->recipe_dir,
                  "The directory of the recipe the chain was submitted from")
      ->required();
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
