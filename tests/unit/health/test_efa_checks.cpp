#include <catch2/catch.hpp>

#include "health_trees.hpp"
#include "trnslurm/health/efa_checks.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

namespace {
NodeInstance instance_of(const std::filesystem::path& root) {
  auto found = node_instance(read_topology(root), std::nullopt);
  REQUIRE(found);
  return *found;
}
}  // namespace

TEST_CASE("efa: the devices the type has (trn1 8, trn1n 16)") {
  CHECK(count_efa_devices(test::fixture("neuron/trn1")) == 8U);
  CHECK(count_efa_devices(test::fixture("neuron/trn1n")) == 16U);
  for (const char* name : {"trn1", "trn1n"}) {
    const auto root = test::fixture(std::string("neuron/") + name);
    const auto fs = check_efa_devices(root, instance_of(root));
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].status == Status::ok);
  }
}

TEST_CASE("efa: a missing device, or another driver's, is a FAIL") {
  test::ScratchDir scratch;
  const auto root = test::copy_tree(scratch, "trn1");
  std::filesystem::remove_all(root / "sys/class/infiniband/rdmap3");
  std::filesystem::remove(root / "sys/class/infiniband/rdmap4/device/driver");
  std::filesystem::create_symlink("../../../../bus/pci/drivers/mlx5_core",
                                  root / "sys/class/infiniband/rdmap4/device/driver");
  const auto fs = check_efa_devices(root, instance_of(root));
  CHECK(fail_reason(fs) == "efa: 6 of the 8 EFA devices trn1.32xlarge has: a link or adapter is missing");
  std::filesystem::remove_all(root / "sys/class");
  CHECK(worst(check_efa_devices(root, instance_of(root))) == Status::fail);
}

TEST_CASE("libfabric: the efa provider on a type with EFA") {
  const auto root = test::fixture("neuron/trn1");
  const auto trn1 = instance_of(root);
  CHECK(worst(check_libfabric(EfaProbe{EfaState::present, "fi_getinfo: efa"}, trn1)) == Status::ok);
  CHECK(worst(check_libfabric(EfaProbe{EfaState::absent, "fi_getinfo(efa): -61"}, trn1)) == Status::fail);
  CHECK(worst(check_libfabric(std::nullopt, trn1)) == Status::warn);
  // A node of no known type: no provider is not a fault.
  CHECK(worst(check_libfabric(EfaProbe{EfaState::absent, "-61"}, NodeInstance{})) == Status::ok);
}
