#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "trnslurm/chain/job_script.hpp"

using namespace trnslurm;

namespace {
ScriptInput input() {
  ScriptInput in;
  in.chain_id = "20261122-010203-0000abcd";
  in.stage = "train";
  in.run_dir = "/runs/it's here";
  in.command = "torchrun --steps {{total_steps}} --name {{model.name}}\n";
  in.command_origin = {"r.toml", 20, 1};
  in.values = {{"total_steps", "1000"}, {"model.name", "llama $(rm -rf /)"}};
  in.exports = exports_for({{"total_steps", "1000"}});
  in.env = {{"MY_VAR", "steps={{total_steps}} `x`"}};
  in.env_where = "stages.train.env";
  return in;
}
}  // namespace

TEST_CASE("job_script: a script with quoted exports, env and command") {
  auto s = render_job_script(input());
  REQUIRE(s);
  CHECK(s->starts_with("#!/bin/bash\n"));
  CHECK(s->find("set -eo pipefail\n") != std::string::npos);
  CHECK(s->find("export TRNSLURM_CHAIN_ID='20261122-010203-0000abcd'\n") != std::string::npos);
  CHECK(s->find("export TRNSLURM_RUN_DIR='/runs/it'\\''s here'\n") != std::string::npos);
  CHECK(s->find("export TRNSLURM_TOTAL_STEPS='1000'\n") != std::string::npos);
  CHECK(s->find("export MY_VAR='steps=1000 `x`'\n") != std::string::npos);
  CHECK(s->find("export TRNSLURM_MODEL_NAME='llama $(rm -rf /)'\n") != std::string::npos);
  CHECK(s->find("torchrun --steps \"${TRNSLURM_TOTAL_STEPS}\" --name \"${TRNSLURM_MODEL_NAME}\"\n") !=
        std::string::npos);
  // Each variable exported once.
  CHECK(s->find("export TRNSLURM_TOTAL_STEPS=") == s->rfind("export TRNSLURM_TOTAL_STEPS="));
}

TEST_CASE("job_script: bad env names and unquotable values are refused") {
  auto in = input();
  in.env = {{"1BAD", "x"}};
  auto r = render_job_script(in);
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("1BAD") != std::string::npos);
  in = input();
  in.values["model.name"] = "a\rb";
  CHECK_FALSE(render_job_script(in));
  in = input();
  in.command = "run {{missing}}";
  in.values["model_name"] = "other";
  auto m = render_job_script(in);
  REQUIRE_FALSE(m);
  CHECK(m.error().where == "r.toml:20:5");
}

TEST_CASE("job_script: values from JSON") {
  auto j =
      values_from_json(nlohmann::json::parse(R"({"total_steps": 10, "lr": 0.5, "instance": "trn1.32xlarge",
                               "ok": true, "list": [1], "none": null, "sub": {"a": "b"}})"),
                       "plan.json");
  REQUIRE(j);
  CHECK(j->at("total_steps") == "10");
  CHECK(j->at("lr") == "0.5");
  CHECK(j->at("instance") == "trn1.32xlarge");
  CHECK(j->at("ok") == "true");
  CHECK(j->at("sub.a") == "b");
  CHECK(j->count("list") == 0);
  CHECK(j->count("none") == 0);
  const auto not_object = values_from_json(nlohmann::json::array({1}), "x");
  REQUIRE_FALSE(not_object);
  CHECK(not_object.error().where == "x");
}

TEST_CASE("job_script: exports are upper case TRNSLURM_ names") {
  auto e = exports_for({{"total_steps", "5"}, {"model.name", "x"}});
  REQUIRE(e.size() == 2);
  CHECK(e[0] == std::pair<std::string, std::string>{"TRNSLURM_MODEL_NAME", "x"});
  CHECK(e[1] == std::pair<std::string, std::string>{"TRNSLURM_TOTAL_STEPS", "5"});
}

TEST_CASE("job_script: two spellings of one variable with different values are refused") {
  auto in = input();
  in.command = "echo {{model.name}} {{model_name}}";
  in.values["model_name"] = "other";
  auto r = render_job_script(in);
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("TRNSLURM_MODEL_NAME") != std::string::npos);
}

TEST_CASE("job_script: the precompile stage checks the compile cache first and records its key last") {
  auto in = input();
  in.stage = "precompile";
  in.compile_cache = CompileCacheUse{"0123456789abcdef", "/fsx/cache/0123456789abcdef/neuron",
                                     "/fsx/cache/0123456789abcdef/warm.json", true};
  auto s = render_job_script(in);
  REQUIRE(s);
  CHECK(s->find("export NEURON_COMPILE_CACHE_URL='/fsx/cache/0123456789abcdef/neuron'\n") !=
        std::string::npos);
  CHECK(s->find("export TRNSLURM_SKIP_WHEN_WARM='1'\n") != std::string::npos);
  const auto guard = s->find("if [[ $TRNSLURM_SKIP_WHEN_WARM == 1 && -f $TRNSLURM_CACHE_MARKER ]]");
  const auto command = s->find("torchrun --steps");
  const auto record = s->find("mv -f \"$TRNSLURM_CACHE_MARKER.$$\" \"$TRNSLURM_CACHE_MARKER\"");
  REQUIRE(guard != std::string::npos);
  REQUIRE(command != std::string::npos);
  REQUIRE(record != std::string::npos);
  CHECK(guard < command);
  CHECK(command < record);
  CHECK(s->find("# trnslurm:") == std::string::npos);  // the markers themselves are cut away

  // Train gets the cache's location only; without a cache, nothing of it.
  in.stage = "train";
  auto train = render_job_script(in);
  REQUIRE(train);
  CHECK(train->find("export NEURON_COMPILE_CACHE_URL=") != std::string::npos);
  CHECK(train->find("TRNSLURM_CACHE_MARKER ]]") == std::string::npos);
  in.compile_cache.reset();
  auto none = render_job_script(in);
  REQUIRE(none);
  CHECK(none->find("NEURON_COMPILE_CACHE_URL") == std::string::npos);
}
