#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "trnslurm/node/topology.hpp"

using namespace trnslurm;

TEST_CASE("topology: trn1.32xlarge has 16 devices of 2 cores") {
  const auto t = read_topology(test::fixture("neuron/trn1"));
  CHECK(t.instance_type == "trn1.32xlarge");
  REQUIRE(t.devices.size() == 16);
  CHECK(t.devices.front().index == 0);
  CHECK(t.devices.back().index == 15);
  CHECK(t.devices[3].core_count == 2U);
  CHECK(t.arch_type == "NCv2");
  CHECK(t.device_name == "Trainium");
  CHECK(t.devices[3].dev_node);
  CHECK(t.physical_cores() == 32U);
}

TEST_CASE("topology: trn1n, trn2 and trn3") {
  const auto n = read_topology(test::fixture("neuron/trn1n"));
  CHECK(n.instance_type == "trn1n.32xlarge");
  CHECK(n.physical_cores() == 32U);
  const auto t2 = read_topology(test::fixture("neuron/trn2"));
  CHECK(t2.devices.size() == 16);
  CHECK(t2.physical_cores() == 128U);
  const auto t3 = read_topology(test::fixture("neuron/trn3"));
  CHECK(t3.instance_type == "trn3.48xlarge");
  CHECK(t3.device_name == "Trainium3");
  CHECK(t3.physical_cores() == 128U);
}

TEST_CASE("topology: a missing file is unknown, never zero") {
  const auto t = read_topology(test::fixture("neuron/partial"));
  REQUIRE(t.devices.size() == 16);
  CHECK_FALSE(t.devices[7].core_count.has_value());
  // No DMI name: the instance type comes from the devices' own info/architecture.
  CHECK(t.instance_type == "trn1.32xlarge");
  // One core_count unknown: the sum is not trusted; the instance table's count is used.
  CHECK_FALSE(t.physical_cores().has_value());
  const auto instance = node_instance(t, std::nullopt);
  REQUIRE(instance.has_value());
  CHECK(physical_cores(t, *instance) == 32U);
}

TEST_CASE("topology: no tree at all means no devices and unknown cores") {
  const auto t = read_topology(test::fixture("neuron/does-not-exist"));
  CHECK(t.devices.empty());
  CHECK_FALSE(t.instance_type.has_value());
  CHECK_FALSE(t.physical_cores().has_value());
  const auto instance = node_instance(t, std::nullopt);
  REQUIRE(instance.has_value());
  CHECK_FALSE(instance->type.has_value());
  CHECK_FALSE(physical_cores(t, *instance).has_value());
}

TEST_CASE("topology: the node's type from the instance table") {
  const auto trn3 = node_instance(read_topology(test::fixture("neuron/trn3")), std::nullopt);
  REQUIRE(trn3.has_value());
  REQUIRE(trn3->type.has_value());
  CHECK(trn3->type->name == "trn3.48xlarge");
  CHECK(trn3->how == "trn3.48xlarge (bundled)");
  CHECK_FALSE(trn3->by_device);

  // trnx.12xlarge is in no bundled table: unknown, until the site's file defines it.
  const auto x = read_topology(test::fixture("neuron/trnx"));
  const auto unknown = node_instance(x, std::nullopt);
  REQUIRE(unknown.has_value());
  CHECK_FALSE(unknown->type.has_value());
  CHECK(unknown->how == "unknown type trnx.12xlarge");
  const InstanceFile site{R"([instances."trnx.12xlarge"]
target = "trn3"
device = "TrainiumX"
devices = 4
cores_per_device = 8
lnc = [1, 2]
lnc_default = 1
hbm_gib_per_device = 144
)",
                          "site.toml", InstanceOrigin::site};
  const auto known = node_instance(x, site);
  REQUIRE(known.has_value());
  REQUIRE(known->type.has_value());
  CHECK(known->how == "trnx.12xlarge (site)");
  CHECK(known->type->lnc_default.value == 1U);

  // No type name at all: the device's facts, from a type with the same device.
  auto nameless = read_topology(test::fixture("neuron/trn3"));
  nameless.instance_type.reset();
  const auto by_device = node_instance(nameless, std::nullopt);
  REQUIRE(by_device.has_value());
  REQUIRE(by_device->type.has_value());
  CHECK(by_device->by_device);
  CHECK(by_device->how == "device Trainium3 (as on trn3.48xlarge)");

  // A broken site file is an error, not a silent fallback.
  const auto broken =
      node_instance(x, InstanceFile{"[instances.\"trnx.12xlarge\"]\ndevices = 0\n", "site.toml"});
  REQUIRE_FALSE(broken.has_value());
  CHECK(to_string(broken.error()).starts_with("site.toml:2:11: "));
}
