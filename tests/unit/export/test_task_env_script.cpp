#include <catch2/catch.hpp>

#include "trnslurm/export/task_env_script.hpp"

using namespace trnslurm;

namespace {
// The lines of one case of trn_task_env.
std::string branch(const std::string& script, const std::string& label) {
  const auto start = script.find("    " + label + ")\n");
  REQUIRE(start != std::string::npos);
  const auto end = script.find("      ;;\n", start);
  REQUIRE(end != std::string::npos);
  return script.substr(start, end - start);
}
bool sets(const std::string& text, const std::string& name, const std::string& value) {
  return text.find("[ -n \"${" + name + "+set}\" ] || export " + name + "=" + value + "\n") !=
         std::string::npos;
}
}  // namespace

TEST_CASE("task_env_script: the plugin's decision for a trn2.48xlarge node, per launch") {
  const auto type = bundled_instance("trn2.48xlarge");
  REQUIRE(type);
  auto script = task_env_script(*type, EnvSettings{});
  REQUIRE(script);
  const auto torchrun = branch(*script, "torchrun");
  const auto plain = branch(*script, "*");
  // One torchrun per node: its workers take their cores; the per-node step gets all 64 logical cores.
  CHECK(torchrun.find("export NEURON_RT_VISIBLE_CORES") == std::string::npos);
  CHECK(sets(plain, "NEURON_RT_VISIBLE_CORES", "'0-63'"));
  CHECK(sets(torchrun, "TRNSLURM_NPROC_PER_NODE", "'64'"));
  CHECK(sets(torchrun, "NEURON_LOGICAL_NC_CONFIG", "'2'"));
  CHECK(sets(plain, "FI_PROVIDER", "'efa'"));
  // The node's place, from the entry point when it runs.
  CHECK(sets(plain, "MASTER_ADDR", "\"$TRN_MAIN_ADDR\""));
  CHECK(sets(plain, "TRNSLURM_NODE_RANK", "\"$TRN_NODE_INDEX\""));
  CHECK(sets(plain, "TRNSLURM_NNODES", "\"$TRN_NUM_NODES\""));
  CHECK(sets(plain, "MASTER_PORT", "'44000'"));
  CHECK(script->find("TRNSLURM_SET") == std::string::npos);
  CHECK(script->find("export TRN_SRUN_OPTIONS='--ntasks-per-node=1 ") != std::string::npos);
}

TEST_CASE("task_env_script: a node without EFA or devices sets neither") {
  const auto type = bundled_instance("cpu");
  REQUIRE(type);
  auto script = task_env_script(*type, EnvSettings{});
  REQUIRE(script);
  CHECK(script->find("export FI_PROVIDER") == std::string::npos);
  CHECK(script->find("export NEURON_RT_VISIBLE_CORES") == std::string::npos);
  CHECK(sets(*script, "MALLOC_ARENA_MAX", "'64'"));
}

TEST_CASE("task_env_script: the site's root-comm port goes with the main node's address") {
  const auto type = bundled_instance("trn1.32xlarge");
  REQUIRE(type);
  EnvSettings settings;
  settings.root_comm_port = 46820;
  auto script = task_env_script(*type, settings);
  REQUIRE(script);
  CHECK(sets(*script, "NEURON_RT_ROOT_COMM_ID", "\"$TRN_MAIN_ADDR\"':46820'"));
}
