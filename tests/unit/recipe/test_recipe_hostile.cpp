// Issue 31: recipe input that cannot be represented, or that would change what trnslurm runs, is
// refused at load time with where it came from, before anything is planned or submitted.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fmt/format.h>

#include <string>

#include "fixtures.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;

namespace {
std::string minimal() {
  return read_file(test::fixture("recipes/minimal.toml")).value();
}
std::string with_stage_env(std::string_view env) {
  auto text = minimal();
  const std::string at = "[stages.train]\ncommand = \"true\"\n";
  const auto pos = text.find(at);
  REQUIRE(pos != std::string::npos);
  text.insert(pos + at.size(), std::string(env));
  return text;
}
}  // namespace

TEST_CASE("recipe hostile: a --set or --dataset value that is not UTF-8 is refused by its option") {
  const auto text = minimal();
  auto r = load_recipe_text(text, "r.toml", {{"dataset.path", "/data/caf\xe9", "--dataset"}});
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "--dataset");
  CHECK(r.error().what == "the value holds a byte that is not UTF-8 (0xe9) at byte 9");
  r = load_recipe_text(text, "r.toml", {{"model.name", "a\x1b]0;x\x07", ""}});
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "--set model.name");
  CHECK(r.error().what.find("control character (U+001B)") != std::string::npos);
  // An env value as much as a typed one.
  r = load_recipe_text(text, "r.toml", {{"stages.train.env.X", "\xff", ""}});
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "--set stages.train.env.X");
  // Tab and newline are text.
  CHECK(load_recipe_text(text, "r.toml", {{"model.name", "a\tb\nc", ""}}));
}

TEST_CASE("recipe hostile: a control character written as a TOML escape is refused at its line") {
  auto text = minimal();
  const std::string name = "name = \"fixture\"";
  text.replace(text.find(name), name.size(), "name = \"fix\\u001bture\"");
  const auto r = load_recipe_text(text, "r.toml");
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "r.toml:3:8");
  CHECK(r.error().what == "the value of model.name holds a control character (U+001B) at byte 3");
  auto key = minimal();
  key += "[stages.train.env]\n\"A\\u0007\" = \"x\"\n";
  CHECK_FALSE(load_recipe_text(key, "r.toml"));
}

TEST_CASE("recipe hostile: a recipe path that is not UTF-8, a FIFO or oversized is refused") {
  const test::ScratchDir t;
  auto r = load_recipe(t / "caf\xe9.toml");
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("the recipe's path holds a byte that is not UTF-8") != std::string::npos);
  const auto fifo = t / "trnslurm.toml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  r = load_recipe(fifo);
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "the recipe is a FIFO, not a regular file: not read");
  // runs_dir_named_by reads the same file: no wait there either.
  CHECK(runs_dir_named_by(fifo) == runs_dir_named_by(t / "missing.toml"));
  REQUIRE(write_file_atomic(t / "big.toml", std::string(max_recipe_size + 1, '#')));
  r = load_recipe(t / "big.toml");
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "the recipe is larger than 1 MiB: not read");
}

TEST_CASE("recipe hostile: a stage's env may not set trnslurm's variables or bash's read-only ones") {
  for (const auto* name : {"TRNSLURM_RUN_DIR", "TRNSLURM_PREFLIGHT_BIN", "TRNSLURM_DATASET_PATH", "UID",
                           "EUID", "PPID", "BASHOPTS", "SHELLOPTS", "BASH_VERSINFO"}) {
    INFO(name);
    const auto r = load_recipe_text(with_stage_env(fmt::format("env = {{ {} = \"x\" }}\n", name)), "r.toml");
    REQUIRE_FALSE(r);
    CHECK(r.error().where == "r.toml:25:9");
    CHECK(r.error().what.starts_with(fmt::format("{} cannot be set in a stage's env", name)));
    const auto set =
        load_recipe_text(minimal(), "r.toml", {{fmt::format("stages.train.env.{}", name), "x", ""}});
    REQUIRE_FALSE(set);
    CHECK(set.error().where == fmt::format("--set stages.train.env.{}", name));
  }
  // The CPU stand-ins' knobs are the recipes' to set.
  CHECK(load_recipe_text(with_stage_env("env = { TRNSLURM_STANDIN_STEP_DELAY = \"1\", UIDX = \"y\" }\n"),
                         "r.toml"));
}

TEST_CASE("recipe hostile: deep nesting in the file or in a --set value is refused, not a crash") {
  std::string deep = minimal() + "[stages.train.env]\n";
  deep += "[x";
  for (int i = 0; i < 250'000; ++i) deep += ".x";
  deep += "]\n";
  const auto r = load_recipe_text(deep, "r.toml");
  REQUIRE_FALSE(r);
  CHECK(r.error().where.starts_with("r.toml:28:"));
  // Built in a variable: g++ 12 warns a false -Warray-bounds on a temporary's operator+ here.
  std::string brackets(100'000, '[');
  brackets += "]";
  const auto set = load_recipe_text(minimal(), "r.toml", {{"slurm.sbatch_args", brackets, ""}});
  REQUIRE_FALSE(set);
  CHECK(set.error().where == "--set slurm.sbatch_args");
  const auto inline_deep = load_recipe_text(
      minimal(), "r.toml", {{"stages.train.env", "{ a" + std::string(300'000, '.') + " = 1 }", ""}});
  CHECK_FALSE(inline_deep);
}
