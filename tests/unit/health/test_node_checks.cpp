#include <catch2/catch.hpp>

#include "health_trees.hpp"
#include "trnslurm/health/node_checks.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

TEST_CASE("node checks: a healthy trn1 passes every check asked for") {
  NodeCheckInputs in;
  in.root = test::fixture("neuron/trn1");
  in.efa = EfaProbe{EfaState::present, "efa"};
  in.open_files_soft = in.open_files_hard = 65536;
  test::ScratchDir scratch;
  in.checkpoint_dir = scratch.path();
  in.compile_cache = scratch / "cache";
  const auto fs = run_node_checks(in);
  REQUIRE(fs);
  CHECK(worst(*fs) == Status::ok);
  for (const char* check : {"neuron", "errors", "cores", "efa", "libfabric", "nofile", "disk", "cache"})
    CHECK(test::count(*fs, check, Status::ok) >= 1);
}

TEST_CASE("node checks: the broken tree fails on its counter only, and only the checks named run") {
  NodeCheckInputs in;
  in.root = test::fixture("neuron/trn1-ecc");
  in.checks = {"errors", "topology"};
  const auto fs = run_node_checks(in);
  REQUIRE(fs);
  CHECK(fail_reason(*fs) == "errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)");
  CHECK(test::count(*fs, "nofile", Status::fail) == 0);
  CHECK(test::count(*fs, "cores", Status::ok) == 0);
}

TEST_CASE("node checks: the check list is checked") {
  const auto ok = parse_checks("errors, topology,errors", "--checks");
  REQUIRE(ok);
  CHECK(*ok == std::vector<std::string>{"errors", "topology"});
  const auto bad = parse_checks("errors,topolgy", "--checks");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "unknown check 'topolgy' (did you mean 'topology'?)");
  CHECK(bad.error().where == "--checks");
  CHECK_FALSE(parse_checks(" , ", "--checks"));
}

TEST_CASE("findings: status words both ways, the worst, the reason") {
  CHECK(to_string(Status::fail) == "FAIL");
  CHECK(parse_status("warn") == Status::warn);
  CHECK_FALSE(parse_status("bad"));
  const std::vector<Finding> fs{{"a", Status::ok, "x"}, {"b", Status::fail, "y"}, {"c", Status::fail, "z"}};
  CHECK(worst(fs) == Status::fail);
  CHECK(fail_reason(fs) == "b: y; c: z");
}
