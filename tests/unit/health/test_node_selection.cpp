#include <catch2/catch.hpp>

#include "trnslurm/health/node_selection.hpp"

using namespace trnslurm::health;

TEST_CASE("node selection: the states in which a node takes a job now") {
  for (const auto* s : {"idle", "mixed", "allocated", "completing", "planned", "idle-", "mixed-"}) {
    INFO(s);
    CHECK(unusable_reason(s).empty());
  }
  CHECK(unusable_reason("drained") == "drained");
  CHECK(unusable_reason("draining") == "draining");
  CHECK(unusable_reason("down") == "down");
  CHECK(unusable_reason("down*") == "down, not responding");
  CHECK(unusable_reason("idle*") == "not responding");
  CHECK(unusable_reason("idle~") == "powered down");
  CHECK(unusable_reason("idle#") == "powering up");
  CHECK(unusable_reason("drained*~") == "drained, not responding, powered down");
  CHECK(unusable_reason("reserved") == "reserved");
  CHECK(unusable_reason("idle+drain") == "drain");
  CHECK(unusable_reason("") == "no state");
}

TEST_CASE("node selection: the default partition's usable nodes, the others named") {
  const std::string out =
      "n1|debug*|idle\n"
      "n2|debug*|mixed\n"
      "n3|debug*|drained\n"
      "n4|debug*|down*\n"
      "n5|debug*|allocated\n"
      "n1|big|idle\n"
      "n9|big|idle\n";
  const auto s = select_nodes(out, std::nullopt);
  REQUIRE(s);
  CHECK(s->partition == "debug");
  CHECK(s->usable == std::vector<std::string>{"n1", "n2", "n5"});
  REQUIRE(s->skipped.size() == 2);
  CHECK(s->skipped[0].node == "n3");
  CHECK(s->skipped[0].state == "drained");
  CHECK(s->skipped[1].node == "n4");
  CHECK(s->skipped[1].why == "down, not responding");

  const auto big = select_nodes(out, std::string("big"));
  REQUIRE(big);
  CHECK(big->usable == std::vector<std::string>{"n1", "n9"});
  CHECK(big->skipped.empty());
}

TEST_CASE("node selection: every node out of service is a selection with none usable") {
  const auto s = select_nodes("n1|p*|drained\nn2|p*|idle~\n", std::nullopt);
  REQUIRE(s);
  CHECK(s->usable.empty());
  CHECK(s->skipped.size() == 2);
}

TEST_CASE("node selection: a partition that does not exist, no default, or other output is refused") {
  const auto missing = select_nodes("n1|debug*|idle\n", std::string("trn1"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what == "no partition 'trn1'");
  CHECK(missing.error().where == "--partition");
  CHECK(missing.error().hint == "partitions: debug");

  const auto no_default = select_nodes("n1|a|idle\nn2|b|idle\n", std::nullopt);
  REQUIRE_FALSE(no_default);
  CHECK(no_default.error().what == "the cluster has no default partition");
  CHECK(no_default.error().hint == "name one of: a, b");

  CHECK_FALSE(select_nodes("", std::nullopt));
  const auto garbage = select_nodes("NODELIST PARTITION STATE\n", std::nullopt);
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().where == "sinfo");
}
