#include <catch2/catch.hpp>

#include <string>

#include "trnslurm/recipe/bundled_recipes.hpp"
#include "util/toml_read.hpp"

using namespace trnslurm;

namespace {
std::string repeat(std::string_view piece, std::size_t n) {
  std::string out;
  out.reserve(piece.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += piece;
  return out;
}
}  // namespace

// Issue 31: toml++ recursed once per component of a table header, and 250,000 of them crashed
// `plan` (and `env --plugstack` through a site's instances file). Refused on the text first.
TEST_CASE("toml_read: a table header of 250,000 components is refused at its line and column") {
  const std::string text = "title = \"x\"\n[a" + repeat(".a", 249'999) + "]\nk = 1\n";
  const auto r = parse_toml(text, "deep.toml");
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "deep.toml:2:130");  // the 65th component
  CHECK(r.error().what.find("more than 64 levels") != std::string::npos);
}

TEST_CASE("toml_read: dotted keys, arrays and inline tables count together") {
  const auto depth = [](std::size_t n) { return "a" + repeat(".b", n - 1) + " = 1\n"; };
  CHECK(parse_toml(depth(64), "f"));
  CHECK_FALSE(parse_toml(depth(65), "f"));
  CHECK(parse_toml("[[t" + repeat(".x", 63) + "]]\n", "f"));
  CHECK_FALSE(parse_toml("[[t" + repeat(".x", 64) + "]]\n", "f"));
  // A key of 10 parts holding arrays 54 deep is 64; one more is refused.
  const std::string key10 = "k" + repeat(".k", 9) + " = ";
  CHECK(parse_toml(key10 + repeat("[", 54) + repeat("]", 54) + "\n", "f"));
  const auto arrays = parse_toml(key10 + repeat("[", 55) + repeat("]", 55) + "\n", "f");
  REQUIRE_FALSE(arrays);
  CHECK(arrays.error().where == "f:1:77");  // the 55th '['
  // Inside an inline table the keys count below it.
  CHECK_FALSE(parse_toml("a = { b" + repeat(".c", 62) + " = 1 }\n", "f"));
  CHECK(parse_toml("a = { b" + repeat(".c", 61) + " = 1 }\n", "f"));
  CHECK_FALSE(parse_toml("a = [\n" + repeat("{ x = [\n", 32) + "1" + repeat("]}", 32) + "]\n", "f"));
  // Arrays over lines, with comments between their values.
  CHECK_FALSE(parse_toml("a = [ # comment [ [ [\n" + repeat("[\n", 64) + repeat("]\n", 64) + "]\n", "f"));
}

TEST_CASE("toml_read: brackets, dots and quotes inside strings and comments are not nesting") {
  const std::string noise = repeat("[{.", 100);
  CHECK(parse_toml("a = \"" + noise + "\"\n", "f"));
  CHECK(parse_toml("a = '" + noise + "'\n", "f"));
  CHECK(parse_toml("a = \"\"\"\n" + noise + "\n\\\"\"\"\n" + noise + "\"\"\"\n", "f"));
  CHECK(parse_toml("a = '''\n" + noise + "\n'''\n", "f"));
  CHECK(parse_toml("# " + noise + "\na = 1 # " + noise + "\n", "f"));
  CHECK(parse_toml("\"" + noise + "\" = 1\n['t" + noise + "']\nb = [\"]]]]\", '[[[[']\n", "f"));
  CHECK(parse_toml("a = 1.5\nb = [" + repeat("1.5, ", 1000) + "]\n", "f"));
  // A string ending in quotes ("""a"""" is a followed by a quote).
  CHECK(parse_toml("a = \"\"\"x\"\"\"\"\nb = 1\n", "f"));
}

TEST_CASE("toml_read: every bundled recipe passes the nesting check") {
  for (const auto& r : bundled_recipes()) {
    INFO(r.name);
    CHECK(check_toml_nesting(r.text, std::string(r.name)));
  }
}
