#include <catch2/catch.hpp>

#include "trnslurm/chain/poll_backoff.hpp"

using namespace trnslurm;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("poll_backoff: doubles while nothing changes, up to the most, back to the first on a change") {
  PollBackoff b(seconds(2), seconds(60));
  CHECK(b.next(true) == seconds(2));
  CHECK(b.next(false) == seconds(4));
  CHECK(b.next(false) == seconds(8));
  CHECK(b.next(false) == seconds(16));
  CHECK(b.next(false) == seconds(32));
  CHECK(b.next(false) == seconds(60));
  CHECK(b.next(false) == seconds(60));
  CHECK(b.next(true) == seconds(2));
  CHECK(b.next(false) == seconds(4));
}

TEST_CASE("poll_backoff: a most below the first is the first: a fixed interval") {
  PollBackoff b(milliseconds(500), milliseconds(100));
  CHECK(b.next(false) == milliseconds(500));
  CHECK(b.next(true) == milliseconds(500));
}

// Issue 31: `watch --interval nan` once reached here as a wait of nothing, and squeue was asked
// hundreds of times a second.
TEST_CASE("poll_backoff: no wait is below the floor, whatever it is given") {
  PollBackoff zero(milliseconds(0), milliseconds(0));
  CHECK(zero.next(true) == min_poll_wait);
  CHECK(zero.next(false) == min_poll_wait);
  PollBackoff negative(milliseconds(-5000), milliseconds(-1));
  CHECK(negative.next(true) == min_poll_wait);
  CHECK(negative.next(false) == min_poll_wait);
  PollBackoff low(milliseconds(1), seconds(1));
  CHECK(low.next(true) == min_poll_wait);
  CHECK(low.next(false) == 2 * min_poll_wait);
}
