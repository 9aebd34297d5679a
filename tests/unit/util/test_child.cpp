#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "trnslurm/util/child.hpp"

using namespace trnslurm;
using namespace std::chrono_literals;

TEST_CASE("child: a forked function that ends in time gives its wait status") {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(4);
  const auto waited = wait_bounded(pid, 10s);
  REQUIRE(waited);
  REQUIRE(*waited);
  CHECK(WIFEXITED(**waited));
  CHECK(WEXITSTATUS(**waited) == 4);
}

TEST_CASE("child: a forked function that overstays is killed and reaped") {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    sleep(30);
    _exit(0);
  }
  const auto waited = wait_bounded(pid, 200ms);
  REQUIRE(waited);
  CHECK_FALSE(*waited);
  CHECK(waitpid(pid, nullptr, WNOHANG) < 0);  // already reaped: not our child any more
}

TEST_CASE("child: waiting for a process that is not ours is an error") {
  CHECK_FALSE(wait_bounded(getpid(), 10ms));
}
