#include <catch2/catch.hpp>

#include <cstdint>

#include "trnslurm/util/parse_number.hpp"

using trnslurm::parse_number;

TEST_CASE("parse_number: the whole text is one number in range") {
  CHECK(parse_number<std::uint32_t>("42") == 42U);
  CHECK(parse_number<std::int64_t>("-7") == -7);
  CHECK(parse_number<double>("1.5e-4") == 1.5e-4);
  CHECK(parse_number<std::uint64_t>("18446744073709551615") == UINT64_MAX);
}

TEST_CASE("parse_number: refuses empty text, extra characters, signs it cannot hold, overflow") {
  CHECK_FALSE(parse_number<std::uint32_t>(""));
  CHECK_FALSE(parse_number<std::uint32_t>("42 "));
  CHECK_FALSE(parse_number<std::uint32_t>(" 42"));
  CHECK_FALSE(parse_number<std::uint32_t>("+42"));
  CHECK_FALSE(parse_number<std::uint32_t>("-1"));
  CHECK_FALSE(parse_number<std::uint32_t>("4294967296"));
  CHECK_FALSE(parse_number<std::uint64_t>("12_3"));
  CHECK_FALSE(parse_number<double>("1.5x"));
}
