#include <unistd.h>

#include <catch2/catch.hpp>

#include "health_trees.hpp"
#include "trnslurm/health/core_holders.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

namespace {
void hold(const std::filesystem::path& root, int pid, int fd, const std::string& target) {
  const auto dir = root / "proc" / std::to_string(pid);
  std::filesystem::create_directories(dir / "fd");
  test::write_text(dir / "comm", "python3\n");
  std::filesystem::create_symlink(target, dir / "fd" / std::to_string(fd));
}
}  // namespace

TEST_CASE("core holders: none in a fresh tree") {
  const auto fs = check_core_holders(test::fixture("neuron/trn1"), {});
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].status == Status::ok);
}

TEST_CASE("core holders: another process holding devices is a FAIL naming it, the job's own is not") {
  test::ScratchDir scratch;
  const auto root = test::copy_tree(scratch, "trn1");
  hold(root, 4242, 7, "/dev/neuron5");
  hold(root, 4242, 8, "/dev/neuron3");
  hold(root, 4243, 3, "/dev/null");
  hold(root, 77, 3, "/dev/neuron0");
  const auto fs = check_core_holders(root, {77});
  CHECK(fail_reason(fs) ==
        "cores: pid 4242 (python3) holds neuron devices 3,5: its NeuronCores are not free (end it, or reboot "
        "the "
        "node)");
  CHECK(test::count(fs, "cores", Status::fail) == 1);
}

TEST_CASE("core holders: no proc is unknown, a warn") {
  test::ScratchDir scratch;
  const auto fs = check_core_holders(scratch.path(), {});
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].status == Status::warn);
  CHECK_THAT(fs[0].detail, Catch::Contains("who holds the NeuronCores is unknown"));
}
