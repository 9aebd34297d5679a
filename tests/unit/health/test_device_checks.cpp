#include <catch2/catch.hpp>

#include "health_trees.hpp"
#include "trnslurm/health/device_checks.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

namespace {
std::vector<Finding> devices_of(const std::filesystem::path& root) {
  const auto t = read_topology(root);
  const auto instance = node_instance(t, std::nullopt);
  REQUIRE(instance);
  return check_devices(t, *instance);
}
}  // namespace

TEST_CASE("device checks: a whole trn1.32xlarge passes") {
  const auto fs = devices_of(test::fixture("neuron/trn1"));
  CHECK(worst(fs) == Status::ok);
  CHECK(test::count(fs, "neuron", Status::ok) == 1);
  CHECK(fs.back().detail == "16 devices, 32 physical NeuronCores, /dev/neuron* for 16 of them");
}

TEST_CASE("device checks: a device the type promises and the node lacks is a FAIL") {
  test::ScratchDir scratch;
  const auto root = test::copy_tree(scratch, "trn1");
  std::filesystem::remove_all(root / "sys/devices/virtual/neuron_device/neuron9");
  std::filesystem::remove(root / "dev/neuron9");
  const auto fs = devices_of(root);
  CHECK(worst(fs) == Status::fail);
  CHECK_THAT(fail_reason(fs), Catch::Contains("15 of the 16 devices trn1.32xlarge has"));
}

TEST_CASE("device checks: a device without its /dev node or with fewer cores is a FAIL") {
  test::ScratchDir scratch;
  const auto root = test::copy_tree(scratch, "trn1");
  std::filesystem::remove(root / "dev/neuron2");
  test::write_text(root / "sys/devices/virtual/neuron_device/neuron4/core_count", "1\n");
  const auto reason = fail_reason(devices_of(root));
  CHECK_THAT(reason, Catch::Contains("1 of the 16 devices have no /dev/neuron<N>"));
  CHECK_THAT(reason, Catch::Contains("neuron4 has 1 of its 2 NeuronCores"));
}

TEST_CASE("device checks: no devices on a type that promises them is a FAIL, elsewhere a warn") {
  test::ScratchDir scratch;
  const auto root = test::copy_tree(scratch, "trn1");
  std::filesystem::remove_all(root / "sys/devices/virtual/neuron_device");
  CHECK(worst(devices_of(root)) == Status::fail);
  test::ScratchDir empty;
  const auto fs = devices_of(empty.path());
  CHECK(worst(fs) == Status::warn);
  CHECK(test::count(fs, "instances", Status::warn) == 1);
}

TEST_CASE("error counters: all zero passes, one above zero is a FAIL naming the device") {
  const auto ok =
      check_error_counters(test::fixture("neuron/trn1"), read_topology(test::fixture("neuron/trn1")));
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].status == Status::ok);
  CHECK(ok[0].detail == "48 uncorrectable-error counters, all zero");
  const auto root = test::fixture("neuron/trn1-ecc");
  const auto bad = check_error_counters(root, read_topology(root));
  REQUIRE(test::count(bad, "errors", Status::fail) == 1);
  CHECK(fail_reason(bad) == "errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)");
}

TEST_CASE("error counters: a missing counter is unknown, never zero") {
  const auto root = test::fixture("neuron/partial");
  const auto fs = check_error_counters(root, read_topology(root));
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].status == Status::warn);
  CHECK_THAT(fs[0].detail, Catch::Contains("48 of 48 counters unreadable"));
  test::ScratchDir scratch;
  const auto copy = test::copy_tree(scratch, "trn1");
  std::filesystem::remove(copy /
                          "sys/devices/virtual/neuron_device/neuron0/stats/hardware/mem_ecc_uncorrected");
  test::write_text(copy / "sys/devices/virtual/neuron_device/neuron1/stats/hardware/mem_ecc_uncorrected",
                   "garbage\n");
  const auto two = check_error_counters(copy, read_topology(copy));
  CHECK(worst(two) == Status::warn);
  CHECK_THAT(two[0].detail, Catch::Contains("2 of 48 counters unreadable"));
}
