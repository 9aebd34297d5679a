#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "fixtures.hpp"
#include "plan/plan_fixtures.hpp"
#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/chain/preflight.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/health/resource_checks.hpp"

using namespace trnslurm;

namespace {

// The bundled recipe `name` with `sets`, planned for a million samples, as `trnslurm submit` makes
// its chain inputs (with the binary that submitted).
Result<ChainInputs> inputs(const std::string& name, const std::vector<Override>& sets = {}) {
  const auto recipe = test::bundled_recipe(name, sets);
  auto plan = make_plan(recipe, test::rows(1'000'000));
  INFO((plan ? std::string() : plan.error().what));
  REQUIRE(plan);
  return chain_inputs_from_recipe(
      recipe, to_json(*plan), "20261122-010203-0000abcd", "/runs/x",
      {{"backend_dir", "/opt/trnslurm/cpu"}, {"trnslurm_bin", "/opt/bin/trnslurm"}});
}

const StageInput& train_of(const ChainInputs& in) {
  const auto it = std::ranges::find(in.stages, std::string("train"), &StageInput::name);
  REQUIRE(it != in.stages.end());
  return *it;
}

health::NodeRow row(std::string node, health::Status status, std::string why = {}) {
  return {std::move(node), status, std::move(why), {}};
}

}  // namespace

TEST_CASE("preflight: recipe keys, their defaults, and the train stage only") {
  auto r = load_recipe(test::fixture("recipes/minimal.toml"));
  REQUIRE(r);
  const auto& train = r->stage("train");
  CHECK_FALSE(train.preflight);
  CHECK(train.preflight_checks.empty());
  CHECK(train.max_exclusions == 2);
  CHECK(train.preflight_drain);  // where the site allows it

  r = load_recipe(test::fixture("recipes/minimal.toml"),
                  {{"stages.train.preflight", "false", ""},
                   {"stages.train.preflight_checks", "errors,disk", ""},
                   {"stages.train.max_exclusions", "0", ""},
                   {"stages.train.preflight_drain", "false", ""}});
  REQUIRE(r);
  CHECK(r->stage("train").preflight == false);
  CHECK(r->stage("train").preflight_checks == "errors,disk");
  CHECK(r->stage("train").max_exclusions == 0);
  CHECK_FALSE(r->stage("train").preflight_drain);

  r = load_recipe(test::fixture("recipes/minimal.toml"), {{"stages.precompile.preflight", "true", ""}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "preflight applies to the train stage only");
  r = load_recipe(test::fixture("recipes/minimal.toml"), {{"stages.train.preflight", "\"yes\"", ""}});
  REQUIRE_FALSE(r);
  r = load_recipe(test::fixture("recipes/minimal.toml"), {{"stages.train.max_exclusions", "-1", ""}});
  REQUIRE_FALSE(r);
}

TEST_CASE("preflight: on by default for a Neuron instance type, off for cpu, switched by the recipe") {
  auto in = inputs("llama3-8b-trn1");
  REQUIRE(in);
  const auto& p = train_of(*in).preflight;
  REQUIRE(p);
  CHECK(p->trnslurm == "/opt/bin/trnslurm");
  CHECK(p->checks.empty());
  CHECK(p->max_exclusions == 2);
  CHECK(p->drain);
  // One checkpoint of the plan's model: 14 bytes a parameter, about 8e9 of them.
  CHECK(p->checkpoint_bytes > health::checkpoint_bytes(7'000'000'000));
  CHECK(p->checkpoint_bytes < health::checkpoint_bytes(9'000'000'000));
  for (const auto& s : in->stages)
    if (s.name != "train") CHECK_FALSE(s.preflight);

  in = inputs("llama3-8b-trn1", {{"stages.train.preflight", "false", ""}});
  REQUIRE(in);
  CHECK_FALSE(train_of(*in).preflight);

  in = inputs("tiny-cpu");
  REQUIRE(in);
  CHECK_FALSE(train_of(*in).preflight);

  in = inputs("tiny-cpu", {{"stages.train.preflight", "true", ""},
                           {"stages.train.preflight_checks", "disk, errors", ""},
                           {"stages.train.max_exclusions", "1", ""},
                           {"stages.train.preflight_drain", "false", ""}});
  REQUIRE(in);
  REQUIRE(train_of(*in).preflight);
  CHECK(train_of(*in).preflight->checks == "disk,errors");
  CHECK(train_of(*in).preflight->max_exclusions == 1);
  CHECK_FALSE(train_of(*in).preflight->drain);
}

TEST_CASE("preflight: an unknown check is refused where the recipe names it") {
  const auto in = inputs("tiny-cpu", {{"stages.train.preflight", "true", ""},
                                      {"stages.train.preflight_checks", "errors,topolgy", ""}});
  REQUIRE_FALSE(in);
  CHECK_THAT(in.error().what, Catch::Contains("unknown check 'topolgy'"));
  CHECK_THAT(in.error().where, Catch::Contains("stages.train.preflight_checks"));
}

TEST_CASE("preflight: the train script exports its settings for the wrapper, and runs it first") {
  ScriptInput in;
  in.chain_id = "c";
  in.stage = "train";
  in.run_dir = "/runs/c";
  in.command = "srun train\n";
  in.resilience = Resilience{3, 0};
  auto s = render_job_script(in);
  REQUIRE(s);
  CHECK(s->find("TRNSLURM_PREFLIGHT_BIN=") == std::string::npos);

  in.preflight = Preflight{"/opt/bin/trnslurm", "errors,disk", 1, false, 1234};
  s = render_job_script(in);
  REQUIRE(s);
  for (const auto* line :
       {"export TRNSLURM_PREFLIGHT_BIN='/opt/bin/trnslurm'\n",
        "export TRNSLURM_PREFLIGHT_CHECKS='errors,disk'\n", "export TRNSLURM_MAX_EXCLUSIONS='1'\n",
        "export TRNSLURM_PREFLIGHT_DRAIN='0'\n", "export TRNSLURM_CHECKPOINT_BYTES='1234'\n"}) {
    INFO(line);
    CHECK(s->find(line) != std::string::npos);
  }
  // The pre-flight runs before the command.
  const auto check = s->find("\"$TRNSLURM_PREFLIGHT_BIN\" preflight");
  REQUIRE(check != std::string::npos);
  CHECK(check < s->find("srun train\n"));
}

TEST_CASE("preflight: failing nodes are excluded with their reasons, up to max_exclusions") {
  const std::vector<health::NodeRow> healthy{row("n1", health::Status::ok),
                                             row("n2", health::Status::warn, "cores: proc unreadable")};
  CHECK_FALSE(preflight_event(healthy, {}, 2));

  const std::vector<health::NodeRow> rows{row("n1", health::Status::fail, "errors: neuron device 5: 3 SRAM"),
                                          row("n2", health::Status::ok),
                                          row("n3", health::Status::fail, "efa: 7 of 8 devices")};
  auto e = preflight_event(rows, {}, 2);
  REQUIRE(e);
  CHECK(e->event == "exclude");
  CHECK(e->cause == "preflight");
  CHECK(e->nodes == std::vector<std::string>{"n1", "n3"});
  CHECK(e->why == "n1: errors: neuron device 5: 3 SRAM; n3: efa: 7 of 8 devices");
  CHECK_FALSE(e->max_exclusions);

  // Restarts of other causes do not count; exclusions do.
  std::vector<RestartEvent> log(3);
  log[0].event = "requeue";
  log[1].event = "exclude";
  log[2].event = "restart";
  e = preflight_event(rows, log, 2);
  REQUIRE(e);
  CHECK(e->event == "exclude");
  log.push_back(log[1]);
  e = preflight_event(rows, log, 2);
  REQUIRE(e);
  CHECK(e->event == "gave-up");
  CHECK(e->max_exclusions == 2u);
  e = preflight_event(rows, {}, 0);
  REQUIRE(e);
  CHECK(e->event == "gave-up");
}

TEST_CASE("preflight: its events written as a line of the restarts log read back the same") {
  RestartEvent e;
  e.event = "exclude";
  e.cause = "preflight";
  e.restart = 1;
  e.job = 12;
  e.time = 1700000000;
  e.nodes = {"n1", "n3"};
  e.why = "n1: errors: \"quoted\"\nnext";
  e.drain = "drained n1; n3 not drained: why";
  const auto line = to_json(e).dump();
  CHECK(line.find('\n') == std::string::npos);
  const auto back = parse_restarts(line + "\n");
  REQUIRE(back.size() == 1);
  CHECK(back[0].event == "exclude");
  CHECK(back[0].cause == "preflight");
  CHECK(back[0].restart == 1);
  CHECK(back[0].job == 12);
  CHECK(back[0].time == 1700000000);
  CHECK(back[0].nodes == e.nodes);
  CHECK(back[0].why == e.why);
  CHECK(back[0].drain == e.drain);
  CHECK_FALSE(back[0].max_exclusions);
  CHECK(describe_cause("preflight") == "a node failed the pre-flight health checks (excluded, requeued)");

  e.event = "gave-up";
  e.max_exclusions = 2;
  CHECK(parse_restarts(to_json(e).dump())[0].max_exclusions == 2u);
}
