#include <catch2/catch.hpp>

#include <string>

#include "trnslurm/util/toml_edit.hpp"

using namespace trnslurm;

namespace {
std::string edited(std::string_view text, const std::vector<TomlSet>& sets) {
  auto out = set_toml_values(text, "r.toml", sets);
  if (!out) FAIL(to_string(out.error()));
  return *out;
}
}  // namespace

TEST_CASE("toml_edit: a value is replaced where it is written, its comment and the rest kept") {
  const std::string text =
      "# head comment\n[train]\ntp = 8          # as published\npp = 4\n\n[cluster]\nnodes = 32\n# tail\n";
  CHECK(edited(text, {{"train", "tp", "32"}, {"cluster", "nodes", "4"}}) ==
        "# head comment\n[train]\ntp = 32          # as published\npp = 4\n\n[cluster]\nnodes = 4\n# tail\n");
}

TEST_CASE("toml_edit: an absent key goes after its section's last value, in the order given") {
  const std::string text =
      "[cluster]\ninstance = \"trn2.48xlarge\"\nnodes = 8\n# about train\n\n[train]\ntp = 8\n";
  CHECK(edited(text, {{"cluster", "lnc", "2"}, {"cluster", "cores", "3"}, {"train", "mbs", "2"}}) ==
        "[cluster]\ninstance = \"trn2.48xlarge\"\nnodes = 8\nlnc = 2\ncores = 3\n# about "
        "train\n\n[train]\ntp = 8\n"
        "mbs = 2\n");
}

TEST_CASE("toml_edit: a missing section is appended, a last line without newline gets one") {
  CHECK(edited("[model]\nlayers = 2", {{"train", "tp", "2"}, {"train", "pp", "1"}}) ==
        "[model]\nlayers = 2\n\n[train]\ntp = 2\npp = 1\n");
  CHECK(edited("[train]\ntp = 2", {{"train", "pp", "1"}}) == "[train]\ntp = 2\npp = 1\n");
  CHECK(edited("[train]\n", {{"train", "pp", "1"}}) == "[train]\npp = 1\n");
}

TEST_CASE("toml_edit: columns count characters, not bytes") {
  CHECK(edited("m = { name = \"é€\", x = 1 }\n", {{"m", "x", "5"}}) == "m = { name = \"é€\", x = 5 }\n");
  CHECK(edited("[m]\n\"é\" = 1\n", {{"m", "é", "22"}}) == "[m]\n\"é\" = 22\n");
}

TEST_CASE("toml_edit: refuses what it cannot edit in place") {
  const auto refusal = [](std::string_view text, const std::vector<TomlSet>& sets) {
    auto out = set_toml_values(text, "r.toml", sets);
    REQUIRE_FALSE(out.has_value());
    return to_string(out.error());
  };
  CHECK(refusal("train = { tp = 8 }\n", {{"train", "pp", "2"}}).find("inline") != std::string::npos);
  CHECK(refusal("[train\n", {{"train", "tp", "2"}}).find("r.toml:1") != std::string::npos);
  CHECK(refusal("train = 3\n", {{"train", "tp", "2"}}).find("not a table") != std::string::npos);
  CHECK(refusal("[train]\ntp = [1, 2]\n", {{"train", "tp", "2"}}).find("r.toml:2") != std::string::npos);
  CHECK(refusal("[train]\ntp = 1\n", {{"train", "tp", "= oops"}}).find("does not parse") !=
        std::string::npos);
}

TEST_CASE("toml_edit: a value inside an inline table is still replaced in place") {
  CHECK(edited("train = { tp = 8, pp = 1 } # c\n", {{"train", "tp", "16"}}) ==
        "train = { tp = 16, pp = 1 } # c\n");
}
