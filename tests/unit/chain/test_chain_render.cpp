#include <catch2/catch.hpp>

#include "trnslurm/chain/chain_render.hpp"

using namespace trnslurm;

namespace {
ChainInputs inputs() {
  ChainInputs in;
  in.chain_id = "20261122-010203-0000abcd";
  in.run_dir = "/runs/20261122-010203-0000abcd";
  for (auto name : stage_names) {
    StageInput s;
    s.name = std::string(name);
    s.command = "echo {{stage}} {{total_steps}}";
    s.command_origin = {"r.toml", 10, 1};
    in.stages.push_back(s);
  }
  in.values = {{"total_steps", "100"}};
  in.exports = {{"TRNSLURM_TOTAL_STEPS", "100"}};
  return in;
}
}  // namespace

TEST_CASE("chain_render: every enabled stage rendered in order") {
  auto in = inputs();
  in.stages[1].enabled = false;
  in.stages[2].nodes = 4;
  auto c = render_chain(in);
  REQUIRE(c);
  REQUIRE(c->stages.size() == 3);
  CHECK(c->stages[0].name == "convert");
  CHECK(c->stages[1].name == "train");
  CHECK(c->stages[1].nodes == 4);
  CHECK(c->stages[1].script.find("echo \"${TRNSLURM_STAGE}\" \"${TRNSLURM_TOTAL_STEPS}\"\n") !=
        std::string::npos);
  CHECK(c->stages[1].script.find("export TRNSLURM_STAGE='train'\n") != std::string::npos);
  CHECK(c->stages[1].script.find("export TRNSLURM_TOTAL_STEPS='100'") != std::string::npos);
}

TEST_CASE("chain_render: selection, empty chains and bad stages") {
  auto in = inputs();
  in.selection.only = "train";
  auto c = render_chain(in);
  REQUIRE(c);
  REQUIRE(c->stages.size() == 1);
  CHECK(c->stages[0].name == "train");

  in = inputs();
  for (auto& s : in.stages) s.enabled = false;
  CHECK_FALSE(render_chain(in));

  in = inputs();
  in.stages[0].nodes = 0;
  CHECK_FALSE(render_chain(in));

  in = inputs();
  in.selection.only = "precompile";
  in.stages[1].enabled = false;
  CHECK_FALSE(render_chain(in));

  in = inputs();
  in.stages[3].command = "echo {{nope}}";
  in.stages[3].command_origin = {"r.toml", 40, 1};
  auto e = render_chain(in);
  REQUIRE_FALSE(e);
  CHECK(e.error().where == "r.toml:40:6");
}

TEST_CASE("chain_render: where a TOML string's text starts") {
  const std::string toml = "[stages.train]\ncommand = \"\"\"\necho hi\n\"\"\"\nx = \"abc\"\ny = '''abc'''\n";
  auto o = string_value_origin(toml, "r.toml", 2, 11);
  CHECK(o.line == 3);
  CHECK(o.column == 1);
  o = string_value_origin(toml, "r.toml", 5, 5);
  CHECK(o.line == 5);
  CHECK(o.column == 6);
  o = string_value_origin(toml, "r.toml", 6, 5);
  CHECK(o.column == 8);
  o = string_value_origin(toml, "--set x", 0, 0);
  CHECK(o.line == 0);
  CHECK(o.file == "--set x");
}
