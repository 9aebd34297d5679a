#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "trnslurm/node/topology.hpp"

using namespace trnslurm;

TEST_CASE("topology: trn1.32xlarge has 16 devices of 2 cores") {
  const auto t = read_topology(test::fixture("neuron/trn1"));
  CHECK(t.instance_type == "trn1.32xlarge");
  CHECK(t.family == Family::trn1);
  REQUIRE(t.devices.size() == 16);
  CHECK(t.devices.front().index == 0);
  CHECK(t.devices.back().index == 15);
  CHECK(t.devices[3].core_count == 2U);
  CHECK(t.arch_type == "NCv2");
  CHECK(t.device_name == "Trainium");
  CHECK(t.devices[3].dev_node);
  CHECK(t.physical_cores() == 32U);
}

TEST_CASE("topology: trn1n and trn2") {
  const auto n = read_topology(test::fixture("neuron/trn1n"));
  CHECK(n.instance_type == "trn1n.32xlarge");
  CHECK(n.family == Family::trn1);
  CHECK(n.physical_cores() == 32U);
  const auto t2 = read_topology(test::fixture("neuron/trn2"));
  CHECK(t2.family == Family::trn2);
  CHECK(t2.devices.size() == 16);
  CHECK(t2.physical_cores() == 128U);
}

TEST_CASE("topology: a missing file is unknown, never zero") {
  const auto t = read_topology(test::fixture("neuron/partial"));
  REQUIRE(t.devices.size() == 16);
  CHECK_FALSE(t.devices[7].core_count.has_value());
  // No DMI name: the instance type comes from the devices' own info/architecture.
  CHECK(t.instance_type == "trn1.32xlarge");
  // One core_count unknown: the sum is not trusted, the published count for the type is used.
  CHECK(t.physical_cores() == 32U);
}

TEST_CASE("topology: no tree at all means no devices and unknown cores") {
  const auto t = read_topology(test::fixture("neuron/does-not-exist"));
  CHECK(t.devices.empty());
  CHECK_FALSE(t.instance_type.has_value());
  CHECK(t.family == Family::unknown);
  CHECK_FALSE(t.physical_cores().has_value());
}

TEST_CASE("topology: families from instance types and device names") {
  CHECK(family_of("trn1.32xlarge") == Family::trn1);
  CHECK(family_of("trn1n.32xlarge") == Family::trn1);
  CHECK(family_of("trn2.48xlarge") == Family::trn2);
  CHECK(family_of("Trainium2") == Family::trn2);
  CHECK(family_of("inf2.48xlarge") == Family::inf2);
  CHECK(family_of("Standard PC (Q35 + ICH9, 2009)") == Family::unknown);
  CHECK(published_physical_cores("trn2.48xlarge") == 128U);
  CHECK_FALSE(published_physical_cores("m5.large").has_value());
}
