#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "trnslurm/util/checked.hpp"

using namespace trnslurm;

TEST_CASE("checked: overflow is reported, a fitting result stored") {
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t out = 0;
  CHECK_FALSE(add_overflows(2, 3, out));
  CHECK(out == 5);
  CHECK(add_overflows(max, 1, out));
  CHECK_FALSE(mul_overflows(1ULL << 31, 1ULL << 32, out));
  CHECK(out == 1ULL << 63);
  CHECK(mul_overflows(1ULL << 32, 1ULL << 32, out));
}

TEST_CASE("checked: saturating arithmetic stops at the maximum") {
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  CHECK(saturating_add(max - 1, 5) == max);
  CHECK(saturating_mul(1ULL << 40, 1ULL << 40) == max);
  CHECK(saturating_add(40, 2) == 42);
  CHECK(saturating_mul(6, 7) == 42);
}
