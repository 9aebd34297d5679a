#include <catch2/catch.hpp>

#include <future>

#include "fixtures.hpp"
#include "trnslurm/util/file_lock.hpp"

using namespace trnslurm;

TEST_CASE("file_lock: a second holder is told the lock is busy until the first lets go") {
  test::ScratchDir dir;
  const auto path = dir / "x.lock";
  auto first = FileLock::acquire(path, FileLock::Wait::no, "the test lock");
  REQUIRE(first);
  REQUIRE(std::filesystem::exists(path));
  // flock is per open file description: a second acquire in this process competes like another one.
  auto second = FileLock::acquire(path, FileLock::Wait::no, "the test lock");
  REQUIRE_FALSE(second);
  CHECK(FileLock::busy(second.error()));
  CHECK(second.error().what.starts_with("the test lock"));
  CHECK(second.error().where == path.string());
  {
    auto moved = std::move(*first);  // the moved-from lock must not release it
    CHECK_FALSE(FileLock::acquire(path, FileLock::Wait::no, "the test lock"));
  }
  CHECK(FileLock::acquire(path, FileLock::Wait::no, "the test lock"));
}

TEST_CASE("file_lock: Wait::yes returns once the holder lets go") {
  test::ScratchDir dir;
  const auto path = dir / "x.lock";
  auto held = FileLock::acquire(path, FileLock::Wait::no, "the test lock");
  REQUIRE(held);
  auto waiter = std::async(std::launch::async, [&] {
    auto lock = FileLock::acquire(path, FileLock::Wait::yes, "the test lock");
    return lock.has_value();
  });
  { auto release = std::move(*held); }
  CHECK(waiter.get());
}

TEST_CASE("file_lock: a lock that cannot be created is an error, not busy") {
  test::ScratchDir dir;
  const auto path = dir / "missing" / "x.lock";
  auto lock = FileLock::acquire(path, FileLock::Wait::yes, "the test lock");
  REQUIRE_FALSE(lock);
  CHECK_FALSE(FileLock::busy(lock.error()));
  CHECK(lock.error().what.starts_with("cannot create the test lock"));
}
