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

// Issue 31: what a job script, the manifest (JSON) or a terminal cannot carry is found, with its
// byte offset, before anything is submitted.
TEST_CASE("printable: find_unrepresentable finds bytes that are not UTF-8 and control characters") {
  using trnslurm::find_unrepresentable;
  CHECK_FALSE(find_unrepresentable(""));
  CHECK_FALSE(find_unrepresentable("/data/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80 tab\there\nnewline"));
  const auto latin1 = find_unrepresentable("/data/caf\xe9");
  REQUIRE(latin1);
  CHECK(latin1->offset == 9);
  CHECK(latin1->what == "a byte that is not UTF-8 (0xe9)");
  const auto esc = find_unrepresentable("ab\x1b[2J");
  REQUIRE(esc);
  CHECK(esc->offset == 2);
  CHECK(esc->what == "a control character (U+001B)");
  CHECK(find_unrepresentable("a\rb")->offset == 1);
  CHECK(find_unrepresentable(std::string("a\0b", 3))->offset == 1);
  CHECK(find_unrepresentable("x\x7f")->offset == 1);
  CHECK(find_unrepresentable("x\xc2\x9b")->what == "a control character (U+009B)");  // C1 CSI
  CHECK(find_unrepresentable("\xc0\xaf")->offset == 0);                              // overlong '/'
  CHECK(find_unrepresentable("\xed\xa0\x80")->offset == 0);                          // a surrogate
  CHECK(find_unrepresentable("\xf4\x90\x80\x80")->offset == 0);                      // past U+10FFFF
  CHECK(find_unrepresentable("ok\xe2\x82")->offset == 2);                            // cut short
}
