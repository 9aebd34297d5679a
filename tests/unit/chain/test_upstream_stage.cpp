#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

using namespace trnslurm;

namespace {

DatasetSize rows(std::uint64_t samples) {
  DatasetSize size;
  size.samples = samples;
  size.format = "given";
  return size;
}

// The words of the command a job script runs: from its `srun` (or `python3`) line to the first
// line that does not continue, backslash-newlines joined.
std::vector<std::string> command_words(const std::string& script, std::string_view first) {
  const auto at = script.find(first);
  if (at == std::string::npos) return {};
  std::string text;
  std::istringstream lines(script.substr(at));
  for (std::string line; std::getline(lines, line);) {
    const bool more = line.ends_with('\\');
    text += more ? line.substr(0, line.size() - 1) : line;
    text += ' ';
    if (!more) break;
  }
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The legacy (NxD) recipes: the ones whose stages run the neuronx-distributed record's scripts.
std::vector<std::string> nxd_recipes() {
  std::vector<std::string> out;
  for (const auto& b : bundled_recipes())
    if (auto r = load_recipe_text(b.text, "r.toml"); r && r->upstream.trainer == Trainer::nxd)
      out.emplace_back(b.name);
  REQUIRE(out.size() >= 8);
  return out;
}

// `words` with each option named in `replaced` and the values after it taken out.
std::vector<std::string> without(const std::vector<std::string>& words,
                                 const std::vector<std::string>& replaced) {
  std::vector<std::string> out;
  bool dropping = false;
  for (const auto& w : words) {
    const bool option = w.starts_with("--");
    if (option) dropping = std::ranges::find(replaced, w) != replaced.end();
    if (!dropping) out.push_back(w);
  }
  return out;
}

struct Rendered {
  Recipe recipe;
  ChainSpec chain;
};

Rendered render(std::string_view name) {
  const auto* bundled = find_bundled_recipe(name);
  REQUIRE(bundled != nullptr);
  auto recipe = load_recipe_text(bundled->text, std::string(name) + ".toml");
  REQUIRE(recipe);
  auto plan = make_plan(*recipe, rows(10'000'000));
  REQUIRE(plan);
  auto in = chain_inputs_from_recipe(*recipe, to_json(*plan), "20261124-000000-0000abcd", "/runs/x",
                                     {{"backend_dir", "/opt/trnslurm/cpu"}});
  REQUIRE(in);
  auto chain = render_chain(*in);
  REQUIRE(chain);
  REQUIRE(chain->stages.size() == 4);
  return {std::move(*recipe), std::move(*chain)};
}

Error load_error(std::string text, std::string_view from, std::string_view to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  auto recipe = load_recipe_text(text, "r.toml");
  REQUIRE_FALSE(recipe);
  return recipe.error();
}

std::string line_col(std::string_view text, std::string_view needle, std::size_t offset = 0) {
  const auto at = text.find(needle) + offset;
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const auto column = at - text.rfind('\n', at);
  return "r.toml:" + std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace

TEST_CASE(
    "upstream_stage: every NxD recipe's precompile is its train command, changed only in compile_args") {
  for (const auto& recipe_name : nxd_recipes()) {
    INFO(recipe_name);
    const auto r = render(recipe_name);
    const auto& precompile = r.recipe.stage("precompile");
    const auto& train = r.recipe.stage("train");
    REQUIRE_FALSE(train.script.empty());
    CHECK(precompile.compile_only);
    CHECK(precompile.script == train.script);
    const auto train_words = command_words(r.chain.stages[2].script, "srun ");
    auto compile_words = command_words(r.chain.stages[1].script, "srun ");
    REQUIRE_FALSE(train_words.empty());
    // The only word before torchrun that differs: neuron_parallel_compile.
    const auto npc = std::ranges::find(compile_words, "neuron_parallel_compile");
    REQUIRE(npc != compile_words.end());
    compile_words.erase(npc);
    // compile_args' flags replace the train stage's: the rest is word for word the same.
    std::vector<std::string> compile_args;
    std::istringstream in(precompile.compile_args_text);
    for (std::string w; in >> w;) compile_args.push_back(w);
    REQUIRE_FALSE(compile_args.empty());
    std::vector<std::string> replaced;
    for (const auto& w : compile_args)
      if (w.starts_with("--")) replaced.push_back(w);
    auto expected = without(train_words, replaced);
    expected.insert(expected.end(), compile_args.begin(), compile_args.end());
    CHECK(compile_words == expected);
    // And the environment: the train stage's, every variable.
    for (const auto& [name, value] : train.env) CHECK(precompile.env.at(name) == value);
  }
}

TEST_CASE(
    "upstream_stage: every NxD recipe names upstream's scripts of its release and their required flags") {
  for (const auto& recipe_name : nxd_recipes()) {
    INFO(recipe_name);
    const auto r = render(recipe_name);
    CHECK(r.recipe.upstream.package == "neuronx-distributed");
    CHECK(r.recipe.upstream.release == "2.28");  // the last release that supports NxD training
    for (const auto& s : r.recipe.stages) CHECK_FALSE(s.script.empty());
    // The converter's --hw_backend is required in both directions.
    CHECK(r.chain.stages[0].script.find("--hw_backend \"${TRNSLURM_HW_BACKEND}\"") != std::string::npos);
    CHECK(r.chain.stages[3].script.find("--hw_backend \"${TRNSLURM_HW_BACKEND}\"") != std::string::npos);
    // Resuming is upstream's own.
    CHECK(r.chain.stages[2].script.find("--loading_step latest_if_exists") != std::string::npos);
  }
}

TEST_CASE("upstream_stage: a flag upstream would refuse or ignore is refused at its file:line:column") {
  const auto text = std::string(find_bundled_recipe("llama3-8b-trn1")->text);
  // tp_zero1 parses strictly: --global_batch_size is not one of its flags.
  auto e = load_error(text, "--batch_size {{mbs}}", "--global_batch_size {{gbs}}");
  CHECK_THAT(e.what, Catch::Contains("'--global_batch_size' is not a flag"));
  CHECK(e.where == line_col(text, "--batch_size {{mbs}}"));
  // Its --pretrained_weight is a switch: a value after it is refused.
  e = load_error(text, "latest_if_exists --pretrained_weight", "latest_if_exists --pretrained_weight /fsx/x");
  CHECK(e.where.starts_with("r.toml:"));
  // run_llama_nxd reads parse_known_args: --num_layers would be ignored, so trnslurm refuses it.
  const auto pp = std::string(find_bundled_recipe("llama3-70b-trn1")->text);
  e = load_error(pp, "--seq_len {{seq_len}}", "--seq_len {{seq_len}} --num_layers 80");
  CHECK_THAT(e.what, Catch::Contains("--num_layers"));
  // The converter requires --hw_backend.
  e = load_error(text, "--convert_to_full_state --hw_backend {{hw_backend}}", "--convert_to_full_state");
  CHECK_THAT(e.what, Catch::Contains("--hw_backend"));
  // A script the record does not have.
  e = load_error(text, "tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py\"",
                 "tp_zero1_llama_hf_pretrain/train.py\"");
  CHECK_THAT(e.what, Catch::Contains("no script"));
  // compile_args for a flag the script does not have.
  e = load_error(text, "compile_args = \"--steps_this_run 2\"", "compile_args = \"--max_step 2\"");
  CHECK(e.where == line_col(text, "compile_args = \"--steps_this_run 2\"", 16));
}

TEST_CASE(
    "upstream_stage: a recipe without [upstream] or with an unknown release is refused with the records "
    "bundled") {
  const auto text = std::string(find_bundled_recipe("llama3-8b-trn1")->text);
  auto e = load_error(text, "release = \"2.28\"", "release = \"1.0\"");
  CHECK_THAT(e.what, Catch::Contains("no interface record for neuronx-distributed release 1.0"));
  CHECK_THAT(e.hint, Catch::Contains("neuronx-distributed 2.28"));
  e = load_error(text, "root = \"/fsx/neuronx-distributed\"", "");
  CHECK_THAT(e.hint, Catch::Contains("22cadad34418fb8b5939bd8cdfc7a376eede9981"));
}
