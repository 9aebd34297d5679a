#include <catch2/catch.hpp>

#include <fmt/format.h>

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

namespace {
// A TorchTitan recipe in the current schema: the keys of the track where the schema has them.
std::string titan_recipe(std::string_view train_extra) {
  const auto keys = recipe_keys();
  const bool track_keys = std::ranges::find(keys, "upstream.module") != keys.end();
  return fmt::format(
      "[model]\nname = \"t\"\nlayers = 2\nhidden = 64\nheads = 4\nkv_heads = 2\nffn_hidden = 128\n"
      "vocab = 258\nseq_len = 32\npretrained = \"/m/hf\"\n"
      "[cluster]\ninstance = \"cpu\"\nnodes = 2\ncores_per_node = 2\n"
      "[train]\ngbs = 8\nmbs = 2\nlr = 1e-3\nwarmup_steps = 2\n"
      "[dataset]\npath = \"/d\"\n{}"
      "[slurm]\nexclusive = false\n"
      "[upstream]\npackage = \"torchtitan-neuron\"\nrelease = \"2.33\"\nroot = \"/fsx/tt\"\n"
      "venv = \"/opt/venv\"\n{}"
      "[stages.convert]\nscript = \"scripts/checkpoint_conversion/convert_from_hf.py\"\n"
      "args = \"{{{{model.pretrained}}}} {{{{converted_dir}}}} --model_name llama3 --model_flavor tiny\"\n"
      "[stages.precompile]\ncompile_args = \"--training.steps 2 --checkpoint.no_enable\"\n"
      "[stages.train]\nscript = \"torchtitan/train.py\"\nlaunch = \"torchrun\"\n"
      "args = \"--module torchtitan_neuron.models.llama3 --config llama3_tiny_cpu --training.steps "
      "{{{{total_steps}}}} --checkpoint.enable --checkpoint.folder {{{{checkpoint_dir}}}} {}\"\n"
      "[stages.convert_back]\nscript = \"scripts/checkpoint_conversion/convert_to_hf.py\"\n"
      "args = \"{{{{newest_checkpoint}}}} {{{{export_dir}}}} --hf_assets_path /m/hf --model_name llama3 "
      "--model_flavor tiny\"\n",
      track_keys ? "format = \"text\"\ntokenizer = \"/m/hf\"\ntokens = 100000\n" : "",
      track_keys ? "module = \"torchtitan_neuron.models.llama3\"\nconfig = \"llama3_tiny_cpu\"\n" : "",
      train_extra);
}

ChainSpec render_titan(const Recipe& recipe) {
  auto plan = make_plan(recipe, rows(100'000));
  REQUIRE(plan);
  auto in = chain_inputs_from_recipe(recipe, to_json(*plan), "20261124-000000-0000abcd", "/runs/x", {});
  REQUIRE(in);
  auto chain = render_chain(*in);
  REQUIRE(chain);
  return std::move(*chain);
}
}  // namespace

TEST_CASE("upstream_stage: TorchTitan's stages in its own terms") {
  auto recipe = load_recipe_text(titan_recipe(""), "t.toml");
  REQUIRE(recipe);
  // Eager: no precompile, and why.
  CHECK_FALSE(recipe->stage("precompile").enabled);
  CHECK(recipe->stage("precompile").left_out.find("eager") != std::string::npos);
  const auto chain = render_titan(*recipe);
  REQUIRE(chain.stages.size() == 3);
  const auto& train = chain.stages[1].script;
  // One torchrun per node, marked for the plugin, c10d on its MASTER_ADDR, the module launch.
  CHECK(train.find("srun --ntasks-per-node=1 --trn-launch=torchrun") != std::string::npos);
  CHECK(train.find("--rdzv_backend c10d --rdzv_endpoint \"$MASTER_ADDR:$MASTER_PORT\"") != std::string::npos);
  CHECK(train.find("-m torchtitan.train") != std::string::npos);
  CHECK(train.find("neuron_parallel_compile") == std::string::npos);
  CHECK(train.find("export PYTHONPATH=\"${TRNSLURM_UPSTREAM_ROOT}\"") != std::string::npos);
  // On the CPU backend the workers are processes, not NeuronCores: no comparison with the node's.
  CHECK(train.find("logical NeuronCores") == std::string::npos);
  // The guard comes before the trainer.
  const auto guard = train.find("moved aside");
  REQUIRE(guard != std::string::npos);
  CHECK(guard < train.find("-m torchtitan.train"));
  // convert_back: the newest complete step, then config.json and the tokenizer from the assets.
  const auto& back = chain.stages[2].script;
  CHECK(back.find("scripts/checkpoint_conversion/convert_to_hf.py") != std::string::npos);
  CHECK(back.find("for trn_f in config.json") != std::string::npos);
  const auto copy = back.find("cp ", back.find("for trn_f in config.json"));
  REQUIRE(copy != std::string::npos);
  const auto copy_line = back.substr(copy, back.find('\n', copy) - copy);
  CHECK(copy_line.find("/m/hf") != std::string::npos);
  CHECK(copy_line.find("TRNSLURM_EXPORT_DIR") != std::string::npos);
}

TEST_CASE(
    "upstream_stage: a TorchTitan recipe that compiles with the Neuron backend keeps a precompile run") {
  auto recipe = load_recipe_text(titan_recipe("--compile.enable --compile.backend neuron"), "t.toml");
  REQUIRE(recipe);
  const auto& precompile = recipe->stage("precompile");
  REQUIRE(precompile.enabled);
  CHECK_FALSE(precompile.compile_only);  // the train command itself, no neuron_parallel_compile
  const auto chain = render_titan(*recipe);
  REQUIRE(chain.stages.size() == 4);
  const auto& script = chain.stages[1].script;
  CHECK(script.find("-m torchtitan.train") != std::string::npos);
  CHECK(script.find("neuron_parallel_compile") == std::string::npos);
  const auto words = command_words(script, "srun ");
  const auto unquoted = [](std::string w) {
    std::erase(w, '\'');
    return w;
  };
  const auto steps =
      std::ranges::find_if(words, [&](const std::string& w) { return unquoted(w) == "--training.steps"; });
  REQUIRE(steps != words.end());
  REQUIRE(steps + 1 != words.end());
  CHECK(unquoted(*(steps + 1)) == "2");
  // --compile.no_enable after the switch turns it off again: eager.
  auto off = load_recipe_text(titan_recipe("--compile.enable --compile.backend neuron --compile.no_enable"),
                              "t.toml");
  REQUIRE(off);
  CHECK_FALSE(off->stage("precompile").enabled);
}

namespace {
// A stage's words as written, with the values of `--model_name` and `--model_flavor` (the model
// each recipe converts) and `--metrics.log_freq` (the tiny recipe logs every step) left out.
std::vector<std::string> stage_words(const Recipe& recipe, std::string_view stage) {
  std::vector<std::string> words;
  for (const auto& w : recipe.stage(stage).args) words.push_back(w.text);
  return without(words, {"--model_name", "--model_flavor", "--metrics.log_freq"});
}
}  // namespace

TEST_CASE("upstream_stage: every bundled TorchTitan recipe runs the stages the tiny CPU recipe proves") {
  const auto* tiny_text = find_bundled_recipe("tiny-titan-cpu");
  REQUIRE(tiny_text != nullptr);
  const auto tiny = load_recipe_text(tiny_text->text, "tiny-titan-cpu.toml");
  REQUIRE(tiny);
  int titan = 0;
  for (const auto& b : bundled_recipes()) {
    auto r = load_recipe_text(b.text, std::string(b.name) + ".toml");
    REQUIRE(r);
    if (r->upstream.trainer != Trainer::torchtitan || b.name == "tiny-titan-cpu") continue;
    ++titan;
    INFO(b.name);
    for (const auto* stage : {"convert", "train", "convert_back"}) {
      INFO(stage);
      CHECK(r->stage(stage).command.empty());
      CHECK(r->stage(stage).script == tiny->stage(stage).script);
      CHECK(r->stage(stage).launch == tiny->stage(stage).launch);
      CHECK(stage_words(*r, stage) == stage_words(*tiny, stage));
    }
    // On Trainium the node's logical NeuronCores are checked against the plan's before torchrun.
    const auto chain = render_titan(*r);
    REQUIRE(chain.stages.size() == 3);
    CHECK(chain.stages[1].script.find("logical NeuronCores") != std::string::npos);
  }
  CHECK(titan >= 5);
}
