// neuronx-distributed's rule (plan_nxd.cpp): what its converter refuses, and the legacy track's
// warnings. The steps themselves: test_plan.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "plan_fixtures.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/plan/suggest.hpp"
#include "trnslurm/plan/trainer_rule.hpp"

using namespace trnslurm;
using trnslurm::test::bundled_recipe;
using trnslurm::test::rows;

namespace {
bool has_warning(const Plan& p, const std::string& text) {
  return std::ranges::any_of(p.warnings,
                             [&](const std::string& w) { return w.find(text) != std::string::npos; });
}
}  // namespace

TEST_CASE("nxd: the converter's refusal of TP below the kv heads with --qkv_linear, off trn2") {
  SECTION("llama3-8b-trn1 at TP 4 (8 kv heads) is refused before anything is queued") {
    const Recipe r = bundled_recipe("llama3-8b-trn1", {{"train.tp", "4", ""}});
    const auto p = make_plan(r, rows(10'000'000));
    REQUIRE_FALSE(p.has_value());
    CHECK_THAT(p.error().what, Catch::Contains("tp = 4 is below the model's 8 kv heads"));
    CHECK_THAT(p.error().what, Catch::Contains("convert stage's checkpoint converter"));
    CHECK_THAT(p.error().hint, Catch::Contains("use tp = 8"));
    CHECK(p.error().where == "--set train.tp");  // the override that made it
    CHECK(make_plan(bundled_recipe("llama3-8b-trn1", {{"train.tp", "8", ""}}), rows(10'000'000)).has_value());
  }
  SECTION("the tiny recipe at TP 1 (2 kv heads, backend cpu) too; TP 2 plans") {
    const Recipe r = bundled_recipe("tiny-cpu", {{"train.tp", "1", ""}});
    const auto p = make_plan(r, rows(1000));
    REQUIRE_FALSE(p.has_value());
    CHECK_THAT(p.error().what, Catch::Contains("tp = 1 is below the model's 2 kv heads"));
    CHECK(make_plan(bundled_recipe("tiny-cpu"), rows(1000)).has_value());
    // Without a stage that runs the converter there is nothing to refuse.
    CHECK(make_plan(bundled_recipe("tiny-cpu", {{"train.tp", "1", ""},
                                                {"stages.convert.enabled", "false", ""},
                                                {"stages.convert_back.enabled", "false", ""}}),
                    rows(1000))
              .has_value());
  }
  SECTION("trn2's converter path groups the heads differently: TP 4 converts there") {
    const Recipe r = bundled_recipe("llama3-8b-trn2", {{"train.tp", "4", ""}});
    CHECK(make_plan(r, rows(10'000'000)).has_value());
  }
  SECTION("--qkv_linear=VALUE is read as the flag is") {
    auto text = std::string(find_bundled_recipe("tiny-cpu")->text);
    const auto at = text.find("--qkv_linear 1");
    REQUIRE(at != std::string::npos);
    text.replace(at, 14, "--qkv_linear=1");
    auto r = load_recipe_text(text, "t.toml", {{"train.tp", "1", ""}});
    if (!r) FAIL(to_string(r.error()));
    CHECK_FALSE(make_plan(*r, rows(1000)).has_value());
  }
}

TEST_CASE("nxd: --suggest never ranks what the converter refuses") {
  const Recipe r = bundled_recipe("llama3-8b-trn1");
  SuggestOptions o;
  o.nodes_max = 4;
  auto s = suggest(r, rows(10'000'000), o);
  REQUIRE(s.has_value());
  REQUIRE_FALSE(s->ranked.empty());
  CHECK(s->ranked.front().config.tp >= 8);
  for (const auto& x : s->ranked) CHECK(x.config.tp >= 8);
  const auto refused = std::ranges::find_if(
      s->refused, [](const Refusals& x) { return x.example.find("kv heads") != std::string::npos; });
  REQUIRE(refused != s->refused.end());
  CHECK(refused->key == "train.tp");
  // tiny at TP 1 is never suggested either.
  auto tiny = suggest(bundled_recipe("tiny-cpu"), rows(1000), {});
  REQUIRE(tiny.has_value());
  for (const auto& x : tiny->ranked) CHECK(x.config.tp >= 2);
}

TEST_CASE("nxd: the legacy track names the release that supports it") {
  const Plan p = *make_plan(bundled_recipe("llama3-8b-trn1"), rows(10'000'000));
  CHECK_FALSE(has_warning(p, "not supported from Neuron 2.29"));
  const Plan later =
      *make_plan(bundled_recipe("llama3-8b-trn1", {{"upstream.release", "2.29", ""}}), rows(10'000'000));
  CHECK(has_warning(later, "NxD training is not supported from Neuron 2.29 on"));
  const Plan trn3 = *make_plan(bundled_recipe("llama3-8b-trn2", {{"cluster.instance", "trn3.48xlarge", ""}}),
                               rows(10'000'000));
  CHECK(has_warning(trn3, "no neuronx-distributed release publishes a trn3 training configuration"));
  CHECK(to_json(p).at("track") == "legacy");
}
