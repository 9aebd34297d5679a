#include <catch2/catch.hpp>

#include "trnslurm/plan/placement.hpp"

using namespace trnslurm;

namespace {
PlacementInput trn3(std::uint32_t nodes, std::uint64_t model_parallel) {
  return {"trn3.48xlarge", 4, nodes, 64, model_parallel, "auto", {"us*"}, "22.05.8"};
}
}  // namespace

TEST_CASE("placement: groups that fit one server need nothing") {
  CHECK(plan_placement(trn3(4, 64)).method == "none");
  CHECK(plan_placement(trn3(1, 256)).method == "none");
  CHECK(plan_placement({"trn2.48xlarge", 1, 8, 64, 256, "auto", {}, "22.05.8"}).why ==
        "trn2.48xlarge is not part of an UltraServer");
}

TEST_CASE("placement: the servers holding whole groups") {
  CHECK(plan_placement(trn3(4, 128)).group_nodes == 2);
  CHECK(plan_placement(trn3(3, 96)).group_nodes == 3);  // 1.5 servers per group: three hold two
  CHECK(plan_placement(trn3(4, 256)).group_nodes == 4);
  const auto big = plan_placement(trn3(8, 512));
  CHECK(big.group_nodes == 8);
  CHECK(big.method == "none");
  REQUIRE(big.warnings.size() == 1);
  CHECK(big.warnings[0].find("more than the 4 of one trn3.48xlarge UltraServer") != std::string::npos);
}

TEST_CASE("placement: auto picks --segment from Slurm 24.05 on, a node feature before") {
  auto in = trn3(8, 128);
  in.slurm_version = "24.05.1";
  const auto seg = plan_placement(in);
  CHECK(seg.method == "segment");
  CHECK(seg.sbatch_args == std::vector<std::string>{"--segment=2"});
  CHECK(seg.why.find("BlockSizes=4") != std::string::npos);
  in.slurm_version = "25.11.0";
  CHECK(plan_placement(in).method == "segment");
  in.slurm_version = "23.11.4";                // topology/block exists, --segment does not yet
  CHECK(plan_placement(in).method == "none");  // 8 nodes: no feature constraint can split them
  const auto two = plan_placement(trn3(2, 128));
  CHECK(two.method == "constraint");
  CHECK(two.features == std::vector<std::string>{"us*"});
  CHECK(two.sbatch_args.empty());  // the prefix waits for the cluster's features
  auto named = trn3(4, 128);
  named.features = {"us1", "us2"};
  CHECK(plan_placement(named).sbatch_args == std::vector<std::string>{"--constraint=[us1|us2]"});
  named.method = "none";
  const auto off = plan_placement(named);
  CHECK(off.sbatch_args.empty());
  CHECK(off.warnings.size() == 1);
}

TEST_CASE("placement: a prefix stands for the cluster's features that start with it") {
  const std::vector<std::string> nodes{"us2", "trn2u", "us1", "us10", "gpu"};
  CHECK(constraint_arg({"us*"}, nodes).value() == "--constraint=[us1|us10|us2]");
  CHECK(constraint_arg({"us1", "us*"}, nodes).value() == "--constraint=[us1|us10|us2]");
  CHECK(constraint_arg({"rack7"}, nodes).value() == "--constraint=[rack7]");
  const auto none = constraint_arg({"ultra*"}, nodes);
  REQUIRE_FALSE(none);
  CHECK(none.error().where == "slurm.ultraserver_features");
}
