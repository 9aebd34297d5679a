#include <catch2/catch.hpp>

#include "trnslurm/util/suggest.hpp"

using namespace trnslurm;

TEST_CASE("suggest: edit distance counts edits and adjacent swaps, ignoring case") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("layres", "layers") == 1);
  CHECK(edit_distance("trian", "train") == 1);
  CHECK(edit_distance("GBS", "gbs") == 0);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("suggest: closest match only when it is a likely typo") {
  const std::vector<std::string> keys{"layers", "hidden", "heads", "kv_heads"};
  CHECK(closest_match("layres", keys) == "layers");
  CHECK(closest_match("head", keys) == "heads");
  CHECK_FALSE(closest_match("optimizer", keys).has_value());
  CHECK_FALSE(closest_match("x", std::vector<std::string>{}).has_value());
}
