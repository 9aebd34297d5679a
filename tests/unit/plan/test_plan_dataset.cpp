#include <catch2/catch.hpp>

#include <string>

#include "fixtures.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

using namespace trnslurm;

namespace {
std::string datasets() {
  return trnslurm::test::fixtures_dir() + "/datasets";
}

Recipe tiny(std::vector<Override> overrides) {
  // Written for tiny-cpu at TP 1 (DP 4) with the dataset format detected; its converting stages
  // off, as NxD's converter cannot shard TP 1 below tiny's 2 kv heads (test_plan_nxd.cpp).
  overrides.insert(overrides.begin(), {{"train.tp", "1", ""},
                                       {"dataset.format", "auto", ""},
                                       {"stages.convert.enabled", "false", ""},
                                       {"stages.convert_back.enabled", "false", ""}});
  auto r = load_recipe_text(find_bundled_recipe("tiny-cpu")->text, "tiny-cpu.toml", overrides);
  if (!r) FAIL(to_string(r.error()));
  return *r;
}
}  // namespace

TEST_CASE("plan_dataset: HF rows are the samples, and the reader's warnings reach the plan") {
  const Recipe r = tiny({{"dataset.path", datasets() + "/hf_list", ""}, {"train.gbs", "4", ""}});
  auto size = count_recipe_dataset(r);
  REQUIRE(size.has_value());
  CHECK(size->samples == 62);
  CHECK(size->format == "hf");
  CHECK(size->files == 3);
  auto p = make_plan(r, *size);
  REQUIRE(p.has_value());
  CHECK(p->steps_per_epoch == 15);  // floor(floor(62 / 4) / 1) / 1
  CHECK(std::ranges::any_of(p->warnings,
                            [](const std::string& w) { return w.find("stale") != std::string::npos; }));
}

TEST_CASE("plan_dataset: a DatasetDict split is the recipe's dataset.split") {
  const Recipe r = tiny({{"dataset.path", datasets() + "/hf_dict", ""},
                         {"dataset.format", "hf-dict", ""},
                         {"dataset.split", "validation", ""}});
  auto size = count_recipe_dataset(r);
  REQUIRE(size.has_value());
  CHECK(size->samples == 6);
  CHECK(size->format == "hf-dict");
}

TEST_CASE("plan_dataset: Megatron samples are (tokens - 1) // seq_len") {
  const Recipe r = tiny({{"dataset.path", datasets() + "/megatron/tokens_u8", ""},
                         {"dataset.format", "megatron", ""},
                         {"model.seq_len", "8", ""}});
  auto size = count_recipe_dataset(r);
  REQUIRE(size.has_value());
  CHECK(size->tokens == 3434u);
  CHECK(size->samples == 3433 / 8);
  CHECK(size->format == "megatron");
}

TEST_CASE("plan_dataset: a missing or unset dataset is an error that says what to do") {
  auto missing = count_recipe_dataset(tiny({{"dataset.path", datasets() + "/nope", ""}}));
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.error().where, Catch::Contains("nope"));
  auto unset = count_recipe_dataset(tiny({{"dataset.path", "", ""}}));
  REQUIRE_FALSE(unset.has_value());
  CHECK(unset.error().where == "--set dataset.path");
  CHECK_THAT(unset.error().hint, Catch::Contains("--samples"));
}
