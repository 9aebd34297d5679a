#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "trnslurm/cache/compile_key.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

using namespace trnslurm;

namespace {

Plan plan_of(const Recipe& recipe) {
  DatasetSize size;
  size.samples = 96000;
  size.format = "given";
  auto plan = make_plan(recipe, size);
  REQUIRE(plan);
  return *plan;
}

// The bundled recipe with `sets` applied, planned for 96000 samples.
CompileKey key_of(const char* bundled, const std::vector<std::string>& sets, const KeyFiles& files = {}) {
  const auto* r = find_bundled_recipe(bundled);
  REQUIRE(r != nullptr);
  std::vector<Override> overrides;
  for (const auto& s : sets) {
    auto o = parse_override(s);
    REQUIRE(o);
    overrides.push_back(*o);
  }
  auto recipe = load_recipe_text(r->text, "r.toml", overrides);
  REQUIRE(recipe);
  auto key = compile_key(*recipe, plan_of(*recipe), files);
  REQUIRE(key);
  return *key;
}

const KeyInput* input(const CompileKey& k, std::string_view name) {
  const auto it = std::ranges::find(k.inputs, name, &KeyInput::name);
  return it == k.inputs.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("compile_key: the schedule, the data and the paths leave the key alone") {
  const auto base = key_of("tiny-cpu", {});
  CHECK(is_compile_key(base.hex));
  CHECK(key_of("tiny-cpu", {}).hex == base.hex);  // deterministic
  for (const auto* set :
       {"train.lr=0.1", "train.epochs=7", "train.warmup_steps=5", "checkpoint.every=3",
        "checkpoint.dir=/elsewhere", "dataset.path=/other/data", "stages.train.time=02:00:00",
        "slurm.partition=big", "stages.train.env.TRNSLURM_STANDIN_LOG=/x.jsonl",
        "stages.train.env.NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=7", "train.gbs=16"}) {
    INFO(set);
    CHECK(key_of("tiny-cpu", {set}).hex == base.hex);
  }
}

TEST_CASE("compile_key: what shapes the graphs changes the key") {
  const auto base = key_of("tiny-cpu", {});
  for (const auto* set :
       {"train.mbs=2", "model.seq_len=64", "model.layers=3", "model.hidden=128", "cluster.nodes=1",
        "stages.train.env.NEURON_CC_FLAGS=--model-type transformer -O1", "stages.train.env.XLA_USE_BF16=1",
        "upstream.release=2.29", "cluster.cores_per_node=4"}) {
    INFO(set);
    CHECK(key_of("tiny-cpu", {set}).hex != base.hex);
  }
  // Another TP (tiny's 2 kv heads keep the converter's TP at 2 or more: 4 on 4 cores a node).
  CHECK(key_of("tiny-cpu", {"cluster.cores_per_node=4", "train.tp=4"}).hex !=
        key_of("tiny-cpu", {"cluster.cores_per_node=4"}).hex);
  // A trainer switch, written in the args: flash attention off.
  const auto* r = find_bundled_recipe("tiny-cpu");
  REQUIRE(r != nullptr);
  std::string text(r->text);
  const auto at = text.find("--use_flash_attention 1");
  REQUIRE(at != std::string::npos);
  text.replace(at, 23, "--use_flash_attention 0");
  auto recipe = load_recipe_text(text, "r.toml");
  REQUIRE(recipe);
  auto changed = compile_key(*recipe, plan_of(*recipe), {});
  REQUIRE(changed);
  CHECK(changed->hex != base.hex);
}

TEST_CASE("compile_key: the files it reads are inputs: config.json and the compiler's version") {
  const auto base = key_of("tiny-cpu", {});
  CHECK(input(base, "model.config")->value.starts_with("unreadable:"));
  CHECK(input(base, "compiler")->value == "not found");
  const auto with_config = key_of("tiny-cpu", {}, KeyFiles{std::string("{\"rope_theta\": 500000}"), ""});
  const auto other_config = key_of("tiny-cpu", {}, KeyFiles{std::string("{\"rope_theta\": 10000}"), ""});
  CHECK(with_config.hex != base.hex);
  CHECK(with_config.hex != other_config.hex);
  CHECK(key_of("tiny-cpu", {}, KeyFiles{std::nullopt, "2.21.18209.0"}).hex != base.hex);

  test::ScratchDir dir;
  const auto venv = dir / "venv";
  std::filesystem::create_directories(venv / "lib" / "python3.10" / "site-packages" /
                                      "neuronx_cc-2.21.18209.0+043b1bf7.dist-info");
  std::filesystem::create_directories(dir / "config");
  std::ofstream(dir / "config" / "config.json") << "{\"hidden_act\": \"silu\"}";
  const auto* r = find_bundled_recipe("tiny-cpu");
  auto o = parse_override("model.config=" + (dir / "config").string());
  REQUIRE(o);
  auto recipe = load_recipe_text(r->text, "r.toml", {*o});
  REQUIRE(recipe);
  const auto files = read_key_files(*recipe, venv);
  CHECK(files.compiler_version == "2.21.18209.0+043b1bf7");
  REQUIRE(files.model_config);
  CHECK(*files.model_config == "{\"hidden_act\": \"silu\"}");
}

TEST_CASE("compile_key: pipeline parallelism makes the micro-batch count an input") {
  const auto tp_pp = key_of("llama3-70b-trn2", {"cluster.nodes=8"});
  REQUIRE(input(tp_pp, "plan.grad_accum") != nullptr);
  CHECK(key_of("llama3-70b-trn2", {"cluster.nodes=8", "train.gbs=512"}).hex != tp_pp.hex);
  CHECK(input(key_of("tiny-cpu", {}), "plan.grad_accum") == nullptr);
  // The train stage's schedule flags are not in its words; its switches are.
  const auto* script = input(tp_pp, "train.script");
  REQUIRE(script != nullptr);
  CHECK(script->value.find("run_llama_nxd.py") != std::string::npos);
  CHECK(script->value.find("--lr") == std::string::npos);
  CHECK(script->value.find("--max_steps") == std::string::npos);
  CHECK(script->value.find("--tensor_parallel_size") != std::string::npos);
}

TEST_CASE("compile_key: a stage that names its own cache is refused while trnslurm keeps one") {
  const auto* r = find_bundled_recipe("tiny-cpu");
  REQUIRE(r != nullptr);
  for (const auto* set : {"stages.train.env.NEURON_CC_FLAGS=--cache_dir=/mine",
                          "stages.precompile.env.NEURON_COMPILE_CACHE_URL=/mine"}) {
    INFO(set);
    auto o = parse_override(set);
    REQUIRE(o);
    auto recipe = load_recipe_text(r->text, "r.toml", {*o});
    REQUIRE(recipe);
    const auto plan = plan_of(*recipe);
    auto key = compile_key(*recipe, plan, {});
    REQUIRE_FALSE(key);
    CHECK(key.error().hint.find("[cache]") != std::string::npos);
    auto off = parse_override("cache.enabled=false");
    auto lenient = load_recipe_text(r->text, "r.toml", {*o, *off});
    REQUIRE(lenient);
    CHECK(compile_key(*lenient, plan, {}));
  }
}

TEST_CASE("compile_key: keys are 16 lower-case hex digits") {
  CHECK(is_compile_key("0123456789abcdef"));
  CHECK_FALSE(is_compile_key("0123456789ABCDEF"));
  CHECK_FALSE(is_compile_key("0123456789abcde"));
  CHECK_FALSE(is_compile_key("../../etc/passwd"));
}

TEST_CASE("compile_key: every bundled recipe has a compile cache of its model and a key") {
  for (const auto& r : bundled_recipes()) {
    INFO(r.name);
    auto recipe = load_recipe_text(r.text, "r.toml");
    REQUIRE(recipe);
    CHECK(recipe->cache.enabled);
    CHECK(recipe->cache.dir.ends_with("/neuron-cache/" + recipe->model.name));  // beside the recipe
    auto key = compile_key(*recipe, plan_of(*recipe), {});
    REQUIRE(key);
    CHECK(is_compile_key(key->hex));
    // Two recipes are two models or two configurations of one: never one key.
    for (const auto& other : bundled_recipes()) {
      if (other.name == r.name) continue;
      auto o = load_recipe_text(other.text, "r.toml");
      REQUIRE(o);
      auto other_key = compile_key(*o, plan_of(*o), {});
      REQUIRE(other_key);
      CHECK(other_key->hex != key->hex);
    }
  }
}
