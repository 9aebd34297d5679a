#include <catch2/catch.hpp>

#include "trnslurm/task_env.hpp"

using namespace trnslurm;

TEST_CASE("task_env: every task learns its node rank") {
  TaskContext task;
  task.node_id = 3;
  task.nnodes = 4;
  const auto env = task_environment(task, {});
  REQUIRE(env.size() == 1);
  CHECK(env[0].name == "TRNSLURM_NODE_RANK");
  CHECK(env[0].value == "3");
  CHECK(env[0].reason.find("of the step's 4 nodes") != std::string::npos);
}

TEST_CASE("task_env: switched off, it touches nothing") {
  EnvSettings off;
  off.enabled = false;
  CHECK(task_environment(TaskContext{}, off).empty());
}

TEST_CASE("task_env: the switch takes on and off and refuses anything else") {
  CHECK(parse_env_switch("on").value() == true);
  CHECK(parse_env_switch("off").value() == false);
  for (const char* bad : {"", "ON", "yes", "off "}) {
    const auto r = parse_env_switch(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where == "--trn-env");
    CHECK_FALSE(r.error().hint.empty());
  }
}
