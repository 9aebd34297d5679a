#include <catch2/catch.hpp>

#include <unistd.h>

#include "trnslurm/util/child.hpp"

using namespace trnslurm;
using namespace std::chrono_literals;

TEST_CASE("child: runs a program with exactly the environment given, output captured") {
  const auto ran =
      run_bounded({"/bin/sh", "-c", "echo \"[$FOO][$HOME]\"; echo err >&2; exit 3"}, {"FOO=bar"}, 10s);
  REQUIRE(ran);
  CHECK(ran->exit_code == 3);
  CHECK_FALSE(ran->timed_out);
  CHECK(ran->output == "[bar][]\nerr\n");
}

TEST_CASE("child: a program that overstays is killed") {
  const auto ran = run_bounded({"/bin/sleep", "30"}, {}, 200ms);
  REQUIRE(ran);
  CHECK(ran->timed_out);
  CHECK(ran->exit_code == -1);
}

TEST_CASE("child: only an absolute program, and one that exists") {
  CHECK_FALSE(run_bounded({"sleep", "1"}, {}, 1s));
  CHECK_FALSE(run_bounded({}, {}, 1s));
  const auto missing = run_bounded({"/nonexistent/scontrol"}, {}, 1s);
  REQUIRE(missing);
  CHECK(missing->exit_code == 127);
}

TEST_CASE("child: waiting for a process that is not ours is an error") {
  CHECK_FALSE(wait_bounded(getpid(), 10ms));
}
