#pragma once
// Overflow-checked 64-bit arithmetic: the one place sizes and counts read from files or built
// from a recipe are added and multiplied without wrapping.

#include <cstdint>
#include <limits>

namespace trnslurm {

// True when a + b (a * b) does not fit in 64 bits; otherwise stores it in `out`.
constexpr bool add_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return __builtin_add_overflow(a, b, &out);
}
constexpr bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

// Saturating at the maximum, for estimates: an absurd shape gives "huge", never a wrapped
// small number.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return add_overflows(a, b, r) ? std::numeric_limits<std::uint64_t>::max() : r;
}
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return mul_overflows(a, b, r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

}  // namespace trnslurm
