#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "fixtures.hpp"
#include "trnslurm/export/export.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

using namespace trnslurm;

namespace {
DatasetSize given(std::uint64_t samples) {
  DatasetSize size;
  size.samples = samples;
  size.format = "given";
  return size;
}

// tiny-cpu with `text` in place of its stages, planned for 1000 samples.
std::pair<Recipe, Plan> tiny(const std::string& stages = {}) {
  const auto* bundled = find_bundled_recipe("tiny-cpu");
  REQUIRE(bundled != nullptr);
  std::string text(bundled->text);
  if (!stages.empty()) text = text.substr(0, text.find("\n[upstream]") + 1) + stages;
  auto recipe = load_recipe_text(text, "tiny.toml");
  if (!recipe) FAIL(recipe.error().what << " at " << recipe.error().where);
  auto plan = make_plan(*recipe, given(1000));
  REQUIRE(plan);
  return {std::move(*recipe), std::move(*plan)};
}

ExportRequest request(const std::filesystem::path& runs) {
  ExportRequest r;
  r.runs_dir = runs;
  r.batch = BatchOptions{"image:1", "queue", {}, 2, 4096};
  r.site = {{"backend_dir", "/opt/trnslurm/cpu"}};
  return r;
}

const ExportFile* file(const Export& e, const std::string& path) {
  for (const auto& f : e.files)
    if (f.path == path) return &f;
  return nullptr;
}
}  // namespace

TEST_CASE("export: the stage scripts are submit's, without the parts that ask Slurm") {
  test::ScratchDir dir;
  const auto [recipe, plan] = tiny();
  auto e = export_chain(recipe, plan, request(dir.path()), "20261127-010203-000-0000abcd");
  REQUIRE(e);
  CHECK(e->stages == std::vector<std::string>{"convert", "precompile", "train", "convert_back"});
  const auto* train = file(*e, "aws-batch/stages/train.sh");
  REQUIRE(train != nullptr);
  CHECK(train->executable);
  CHECK(train->text.find("export TRNSLURM_TOTAL_STEPS='" + std::to_string(plan.total_steps) + "'") !=
        std::string::npos);
  CHECK(train->text.find("srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c") != std::string::npos);
  for (const auto* slurm_only : {"scontrol", "squeue", "sinfo", "trn_outcome", "TRNSLURM_MAX_RESTARTS"})
    CHECK(train->text.find(slurm_only) == std::string::npos);
  const auto* definition = file(*e, "aws-batch/job-definitions/train.json");
  REQUIRE(definition != nullptr);
  const auto json = nlohmann::json::parse(definition->text);
  CHECK(json.at("retryStrategy").at("attempts") == 4);  // max_restarts 3, plus the first
  CHECK(json.at("timeout").at("attemptDurationSeconds") == 15 * 60);
  CHECK(json.at("nodeProperties").at("numNodes") == 2);
}

TEST_CASE("export: an srun of more than one task per node is refused, naming the stage") {
  test::ScratchDir dir;
  const auto [recipe, plan] = tiny(
      "[stages.convert]\nenabled = false\n[stages.precompile]\nenabled = false\n"
      "[stages.convert_back]\nenabled = false\n[stages.train]\ntime = \"00:05:00\"\n"
      "command = \"srun --ntasks-per-node=1 --nodes=1 hostname\"\n");
  auto e = export_chain(recipe, plan, request(dir.path()), "20261127-010203-000-0000abcd");
  REQUIRE_FALSE(e);
  CHECK(e.error().what.find("stage train runs srun --nodes=1") != std::string::npos);
}

TEST_CASE("export: a stage time under a minute is refused, as AWS Batch refuses it") {
  test::ScratchDir dir;
  const auto [recipe, plan] = tiny(
      "[stages.convert]\ntime = \"00:00:59\"\ncommand = \"true\"\n[stages.precompile]\nenabled = false\n"
      "[stages.convert_back]\nenabled = false\n[stages.train]\ntime = \"00:05:00\"\ncommand = \"true\"\n");
  auto e = export_chain(recipe, plan, request(dir.path()), "20261127-010203-000-0000abcd");
  REQUIRE_FALSE(e);
  CHECK(e.error().what.find("at least 60 s") != std::string::npos);
}

TEST_CASE("export: written at once, never over an existing run directory") {
  test::ScratchDir dir;
  const auto [recipe, plan] = tiny();
  auto e = export_chain(recipe, plan, request(dir.path()), "20261127-010203-000-0000abcd");
  REQUIRE(e);
  REQUIRE(write_export(*e));
  for (const auto& f : e->files) {
    std::ifstream in(e->run_dir / f.path);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str() == f.text);
  }
  // Again: the directory exists, nothing is changed and no temporary directory is left.
  auto again = *e;
  again.files.front().text = "changed";
  REQUIRE_FALSE(write_export(again));
  std::ifstream in(e->run_dir / e->files.front().path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == e->files.front().text);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
  // A file that cannot be written (its path runs through a file): no run directory at all.
  auto bad = *e;
  bad.run_dir = dir / "other";
  bad.files.push_back({"recipe.toml/inside", "x", false});
  REQUIRE_FALSE(write_export(bad));
  CHECK_FALSE(std::filesystem::exists(dir / "other"));
  CHECK_FALSE(std::filesystem::exists(dir / ".other.export-tmp"));
}

TEST_CASE("export: the mounts are the top directories the chain reads and writes, each once") {
  const auto [recipe, plan] = tiny();
  const auto mounts = shared_mounts(recipe, "/fsx/runs/x", {"/home/", "/fsx"});
  CHECK(mounts.front() == "/fsx");
  CHECK(std::ranges::count(mounts, std::string("/fsx")) == 1);
  CHECK(std::ranges::count(mounts, std::string("/home")) == 1);
}
