#include <catch2/catch.hpp>

#include "health_trees.hpp"
#include "trnslurm/health/resource_checks.hpp"

using namespace trnslurm;
using namespace trnslurm::health;

TEST_CASE("open files: the hard limit decides, the soft one warns") {
  CHECK(worst(check_open_files(65535, 65535, true)) == Status::ok);
  CHECK(worst(check_open_files(1024, 1048576, true)) == Status::warn);
  const auto low = check_open_files(1024, 4096, true);
  CHECK(worst(low) == Status::fail);
  // No Neuron device here: no runtime will need the files.
  CHECK(worst(check_open_files(1024, 4096, false)) == Status::warn);
  CHECK_THAT(low[0].detail, Catch::Contains("4096 (hard): the Neuron runtime needs 65535"));
}

TEST_CASE("disk: one checkpoint is 14 bytes a parameter, too little room is a FAIL") {
  CHECK(checkpoint_bytes(8'000'000'000ULL) == 112'000'000'000ULL);
  test::ScratchDir scratch;
  CHECK(worst(check_free_space(scratch / "not/yet", 1)) == Status::ok);
  const auto full = check_free_space(scratch.path(), std::uint64_t{1} << 62);
  CHECK(worst(full) == Status::fail);
  CHECK_THAT(full[0].detail, Catch::Contains("one checkpoint needs"));
}

TEST_CASE("cache: writable, to be created, or not writable") {
  test::ScratchDir scratch;
  CHECK(check_cache_dir(scratch.path())[0].detail == scratch.path().string() + " writable");
  CHECK(worst(check_cache_dir(scratch / "a/b")) == Status::ok);
  test::write_text(scratch / "file", "x");
  // A path through a regular file can never be created, whoever runs the test.
  const auto bad = check_cache_dir(scratch / "file/cache");
  CHECK(worst(bad) == Status::fail);
  CHECK_THAT(bad[0].detail, Catch::Contains("is not writable"));
}
