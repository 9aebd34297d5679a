#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "trnslurm/health/drain.hpp"
#include "trnslurm/health/node_checks.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

namespace {

// The root re-check the plugin makes: the drain checks alone, under a fake node's tree.
std::vector<Finding> recheck(std::string_view tree) {
  NodeCheckInputs in;
  in.root = test::fixture("neuron/" + std::string(tree));
  in.checks.assign(drain_checks.begin(), drain_checks.end());
  auto fs = run_node_checks(in);
  REQUIRE(fs);
  return *fs;
}

}  // namespace

TEST_CASE("drain: a broken node is drained only when the site allows it and the step asked") {
  const auto broken = recheck("trn1-ecc");
  auto d = decide_drain(true, true, broken);
  CHECK(d.drain);
  CHECK(d.reason == "trnslurm: errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)");
  CHECK(d.why_not.empty());

  d = decide_drain(false, true, broken);
  CHECK_FALSE(d.drain);
  CHECK(d.reason.empty());
  CHECK(d.why_not == "plugstack.conf does not allow draining (preflight_drain=yes)");

  d = decide_drain(true, false, broken);
  CHECK_FALSE(d.drain);
  CHECK(d.why_not == "not a pre-flight step");
}

TEST_CASE("drain: a healthy node is never drained, whatever the step asks") {
  const auto d = decide_drain(true, true, recheck("trn1"));
  CHECK_FALSE(d.drain);
  CHECK(d.why_not == "the root re-check (topology, errors, efa) found nothing failing");
}

TEST_CASE("drain: only the checks whose inputs the user cannot change count") {
  // A FAIL of a check the user controls (their processes, their directories) never drains.
  const std::vector<Finding> users{{"cores", Status::fail, "pid 7 (python) holds /dev/neuron0"},
                                   {"disk", Status::fail, "no room"},
                                   {"cache", Status::fail, "not writable"},
                                   {"topology", Status::warn, "unknown type"}};
  CHECK_FALSE(decide_drain(true, true, users).drain);
  auto with_efa = users;
  with_efa.push_back({"efa", Status::fail, "4 of 8 EFA devices"});
  const auto d = decide_drain(true, true, with_efa);
  CHECK(d.drain);
  CHECK(d.reason == "trnslurm: efa: 4 of 8 EFA devices");
}

TEST_CASE("drain: the reason is one printable line of bounded length") {
  const std::vector<Finding> odd{{"errors", Status::fail, "device 0\nforged line " + std::string(400, 'x')}};
  const auto d = decide_drain(true, true, odd);
  REQUIRE(d.drain);
  CHECK(d.reason.find('\n') == std::string::npos);
  CHECK(d.reason.starts_with("trnslurm: errors: device 0\\nforged line"));
  CHECK(d.reason.size() <= drain_reason_limit + 3);  // printable() marks a cut with "..."
}

TEST_CASE("drain: scontrol's arguments, no shell") {
  CHECK(drain_command("/usr/bin/scontrol", "n3", "trnslurm: errors: a b") ==
        std::vector<std::string>{"/usr/bin/scontrol", "update", "NodeName=n3", "State=DRAIN",
                                 "Reason=trnslurm: errors: a b"});
}

TEST_CASE("drain: a node drained by trnslurm, as scontrol show node -o prints it") {
  CHECK(
      drained_by_trnslurm("NodeName=n1 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 "
                          "Reason=trnslurm: errors: neuron device 5: 3 [root@2026-11-25T00:10:00]\n"));
  CHECK(drained_by_trnslurm("NodeName=n1 State=MIXED+DRAIN Reason=trnslurm: x"));
  CHECK_FALSE(drained_by_trnslurm("NodeName=n1 State=IDLE ThreadsPerCore=1\n"));
  CHECK_FALSE(drained_by_trnslurm("NodeName=n1 State=IDLE+DRAIN Reason=maintenance [admin@now]\n"));
  CHECK_FALSE(drained_by_trnslurm("NodeName=n1 State=IDLE Reason=trnslurm: x\n"));
  CHECK_FALSE(drained_by_trnslurm("NodeName=n1 OldState=DRAIN State=IDLE Reason=trnslurm: x\n"));
}

TEST_CASE("drain: what the restarts log says of it") {
  const std::vector<std::string> failed{"n1", "n3"};
  CHECK(drain_note(false, true, failed, {}) == "not drained: the recipe sets preflight_drain = false");
  CHECK(drain_note(true, true, failed, {"n1", "n3"}) == "drained n1,n3");
  CHECK(drain_note(true, false, failed, {}) ==
        "n1,n3 not drained: the site does not allow it (plugstack.conf preflight_drain=yes)");
  CHECK(drain_note(true, std::nullopt, failed, {}) ==
        "n1,n3 not drained: draining is the site's choice (plugstack.conf preflight_drain), unreadable here");
  CHECK(drain_note(true, true, failed, {"n1"}) ==
        "drained n1; n3 not drained: the plugin's root re-check (topology, errors, efa) did not fail there");
}
