#include <catch2/catch.hpp>

#include <string>

#include "trnslurm/util/printable.hpp"

using trnslurm::printable;

TEST_CASE("printable: plain text is unchanged") {
  CHECK(printable("--trn-cores: invalid value 'lots'") == "--trn-cores: invalid value 'lots'");
  CHECK(printable("") == "");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 passes
}

TEST_CASE("printable: a newline cannot forge a second log line") {
  const auto out = printable("invalid value '4\nerror: node n1 drained by root'");
  CHECK(out.find('\n') == std::string::npos);
  CHECK(out == "invalid value '4\\nerror: node n1 drained by root'");
  CHECK(printable("a\rb\tc\x1b[2Jd\x7f") == "a\\rb\\tc\\x1b[2Jd\\x7f");
  CHECK(printable(std::string("nul\0here", 8)) == "nul\\x00here");
  CHECK(printable("back\\slash") == "back\\\\slash");
}

TEST_CASE("printable: a huge value is cut") {
  const std::string huge(1 << 20, 'x');
  const auto out = printable(huge);
  CHECK(out.size() == 1024 + 3);
  CHECK(out.ends_with("..."));
  CHECK(printable("abcdef", 4) == "abcd...");
  // An escape is never cut in half.
  CHECK(printable("ab\ncd", 3) == "ab...");
}
