#include "trnslurm/chain/token_count_stage.hpp"

#include "job_script_texts.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace trnslurm {

std::string_view count_tokens_program() {
  const auto texts = detail::job_script_python_texts();
  const auto it = std::ranges::find(texts, std::string_view("count_tokens"), &detail::ScriptText::name);
  return it == texts.end() ? std::string_view{} : it->text;
}

std::optional<TokenCountStage> token_count_stage(const Recipe& recipe, const nlohmann::json& plan,
                                                 TemplateValues& values) {
  if (!plan.is_object() || plan.value("dataset_source", "") != "estimate" ||
      plan.value("token_count_file", "").empty() || !values.contains("dataset.tokenizer"))
    return std::nullopt;
  const auto python =
      recipe.upstream.venv.empty() ? std::string("python3") : std::string("{{upstream.venv}}/bin/python3");
  const auto root = recipe.upstream.root.empty()
                        ? std::string()
                        : std::string("PYTHONPATH={{upstream.root}}${PYTHONPATH:+:\"$PYTHONPATH\"} ");
  TokenCountStage s;
  s.count_prologue = fmt::format(
      "# The token-count stage (docs/plan.md): the corpus's tokens under the trainer's own tokenizer,\n"
      "# counted on this compute node once per corpus and tokenizer; the train stage's steps follow.\n"
      "if [ ! -s {{{{token_count_file}}}} ]; then\n"
      "  {}{} - --dataset {{{{dataset_path}}}} --tokenizer {{{{dataset.tokenizer}}}} "
      "--output {{{{token_count_file}}}} <<'TRNSLURM_COUNT_TOKENS'\n"
      "{}"
      "TRNSLURM_COUNT_TOKENS\n"
      "fi\n",
      root, python, count_tokens_program());
  s.steps_prologue =
      "# The steps from the corpus's token count (counted by this chain's first job): the plan's own\n"
      "# arithmetic, by trnslurm on this node; the run's plan.json is brought up to date with them.\n"
      "# Kept in the run directory and sourced: a variable holding a command's output that eval then\n"
      "# reads is what the template check refuses (docs/security.md).\n"
      "{{trnslurm_bin}} steps --run-dir {{run_dir}} --recipe-dir {{recipe_dir}} >{{run_dir}}/steps.env\n"
      ". {{run_dir}}/steps.env\n";
  std::error_code ec;
  values["recipe_dir"] = recipe.source.empty()
                             ? std::filesystem::current_path(ec).string()
                             : std::filesystem::absolute(recipe.source, ec).parent_path().string();
  return s;
}

}  // namespace trnslurm
