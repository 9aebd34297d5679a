#include <catch2/catch.hpp>

#include <algorithm>

#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

using namespace trnslurm;

namespace {
DatasetSize given(std::uint64_t samples) {
  DatasetSize size;
  size.samples = samples;
  size.format = "given";
  return size;
}
std::string tiny_recipe() {
  const auto* r = find_bundled_recipe("tiny-cpu");
  return r != nullptr ? std::string(r->text) : std::string();
}

// The recipe text, planned for 1000 samples, as chain inputs with backend_dir added as
// `trnslurm submit` adds it.
std::pair<Plan, ChainInputs> inputs_for(const std::string& text) {
  auto recipe = load_recipe_text(text, "tiny.toml");
  REQUIRE(recipe);
  auto plan = make_plan(*recipe, given(1000));
  REQUIRE(plan);
  auto in = chain_inputs_from_recipe(*recipe, to_json(*plan), "20261122-010203-0000abcd", "/runs/x",
                                     {{"backend_dir", "/opt/trnslurm/cpu"}});
  REQUIRE(in);
  return {std::move(*plan), std::move(*in)};
}
}  // namespace

TEST_CASE("chain_recipe: the bundled tiny recipe renders four stages with the plan's figures") {
  const auto text = tiny_recipe();
  REQUIRE_FALSE(text.empty());
  const auto [plan, in] = inputs_for(text);
  CHECK(in.values.at("total_steps") == std::to_string(plan.total_steps));
  CHECK(in.values.at("model.name") == "tiny");
  CHECK_FALSE(in.slurm.exclusive);
  auto chain = render_chain(in);
  REQUIRE(chain);
  REQUIRE(chain->stages.size() == 4);
  const auto& train = chain->stages[2].script;
  CHECK(train.find("export TRNSLURM_TOTAL_STEPS='" + std::to_string(plan.total_steps) + "'") !=
        std::string::npos);
  CHECK(train.find("export TRNSLURM_WARMUP_STEPS='" + std::to_string(plan.warmup_steps) + "'") !=
        std::string::npos);
  CHECK(train.find("export TRNSLURM_GRAD_ACCUM='" + std::to_string(plan.grad_accum) + "'") !=
        std::string::npos);
  // The upstream script's own flags, each value a quoted reference to its export.
  CHECK(train.find("--max_steps \"${TRNSLURM_TOTAL_STEPS}\"") != std::string::npos);
  CHECK(train.find("--grad_accum_usteps \"${TRNSLURM_GRAD_ACCUM}\"") != std::string::npos);
  // upstream.root with {{backend_dir}} rendered, the venv first on PATH.
  CHECK(train.find("export TRNSLURM_UPSTREAM_ROOT='/opt/trnslurm/cpu/neuronx-distributed'") !=
        std::string::npos);
  CHECK(train.find("export PATH=\"${TRNSLURM_UPSTREAM_VENV}\"/bin:\"$PATH\"") != std::string::npos);
  CHECK(train.find("exec torchrun --nnodes \"$TRNSLURM_NNODES\"") != std::string::npos);
  // convert_back finds the newest checkpoint itself: not exported as a value.
  const auto& back = chain->stages[3].script;
  CHECK(back.find("export TRNSLURM_NEWEST_CHECKPOINT=\"${TRNSLURM_CHECKPOINT_DIR}\"/\"$newest\"") !=
        std::string::npos);
  CHECK(back.find("export TRNSLURM_NEWEST_CHECKPOINT='") == std::string::npos);
  CHECK(back.find("--input_dir \"${TRNSLURM_NEWEST_CHECKPOINT}\"/model") != std::string::npos);
  CHECK(chain->stages[0].time == "00:05:00");
}

TEST_CASE("chain_recipe: an unknown placeholder is reported at the recipe's line and column") {
  auto text = tiny_recipe();
  const std::string word = "--output_dir {{export_dir}}";
  const auto at = text.find(word);
  REQUIRE(at != std::string::npos);
  text.replace(at, word.size(), "--output_dir x/{{no_such_key}}");
  auto recipe = load_recipe_text(text, "tiny.toml");
  REQUIRE(recipe);
  auto plan = make_plan(*recipe, given(1000));
  REQUIRE(plan);
  auto in = chain_inputs_from_recipe(*recipe, to_json(*plan), "id", "/runs/x", {{"backend_dir", "/b"}});
  REQUIRE_FALSE(in);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const auto column = at - text.rfind('\n', at) + 13 + 2;  // after "--output_dir x/"
  CHECK(in.error().where == "tiny.toml:" + std::to_string(line) + ":" + std::to_string(column));
  CHECK_THAT(in.error().what, Catch::Contains("no_such_key"));
}

TEST_CASE("chain_recipe: a rendered value the upstream flag would misread is refused at its word") {
  auto text = tiny_recipe();
  const std::string word = "--batch_size {{mbs}}";
  const auto at = text.find(word);
  REQUIRE(at != std::string::npos);
  text.replace(at, word.size(), "--batch_size {{model.name}}");
  auto recipe = load_recipe_text(text, "tiny.toml");
  REQUIRE(recipe);
  auto plan = make_plan(*recipe, given(1000));
  REQUIRE(plan);
  auto in = chain_inputs_from_recipe(*recipe, to_json(*plan), "id", "/runs/x", {{"backend_dir", "/b"}});
  REQUIRE_FALSE(in);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  CHECK_THAT(in.error().where, Catch::StartsWith("tiny.toml:" + std::to_string(line) + ":"));
  CHECK_THAT(in.error().what, Catch::Contains("--batch_size gets 'tiny'"));
}

TEST_CASE("chain_recipe: the plan's UltraServer placement goes to the multi-node stages only") {
  // The tiny recipe on a site type of 2-server UltraServers: TP 2 x PP 2 on 2-core nodes spans two.
  const std::string site = R"(
[instances."trnx.12xlarge"]
target = "trn3"
devices = 1
cores_per_device = 2
lnc = [1]
lnc_default = 1
hbm_gib_per_device = 144
ultraserver_nodes = 2
)";
  auto table = load_instance_table(InstanceFile{site, "site.toml", InstanceOrigin::site});
  REQUIRE(table);
  auto recipe = load_recipe_text(tiny_recipe(), "tiny.toml",
                                 {{"cluster.instance", "trnx.12xlarge", ""},
                                  {"train.tp", "2", ""},
                                  {"train.pp", "2", ""},
                                  {"slurm.ultraserver_features", "[\"us1\", \"us2\"]", ""}},
                                 *table);
  REQUIRE(recipe);
  CHECK(recipe->cluster.cores_per_node == 2u);
  auto plan = make_plan(*recipe, given(1000));
  REQUIRE(plan);
  REQUIRE(plan->placement.sbatch_args == std::vector<std::string>{"--constraint=[us1|us2]"});
  auto in = chain_inputs_from_recipe(*recipe, to_json(*plan), "20261122-010203-0000abcd", "/runs/x",
                                     {{"backend_dir", "/opt/trnslurm/cpu"}});
  REQUIRE(in);
  auto chain = render_chain(*in);
  REQUIRE(chain);
  for (std::size_t k = 0; k < chain->stages.size(); ++k) {
    const auto argv = sbatch_argv(*chain, k, std::nullopt);
    const bool constrained = std::ranges::find(argv, "--constraint=[us1|us2]") != argv.end();
    INFO(chain->stages[k].name);
    CHECK(constrained == (chain->stages[k].nodes > 1));
  }
}
