#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fake_slurm.hpp"
#include "fixtures.hpp"
#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"
#include "trnslurm/util/file.hpp"
#include "trnslurm/util/process.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;
using trnslurm::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view chain_a = "20261124-100000-000-0000000a";
constexpr std::string_view chain_b = "20261124-110000-000-0000000b";

// A submitted chain of two stages under `runs` whose plan.json names `checkpoints`; its jobs are
// in `slurm` with `state`.
fs::path chain_in(const fs::path& runs, std::string_view id, const fs::path& checkpoints, FakeSlurm& slurm,
                  const std::string& state) {
  Manifest m;
  m.chain_id = id;
  m.state = ManifestState::submitted;
  m.run_dir = create_run_dir(runs, id).value();
  m.checkpoint_dir = checkpoints.string();
  for (const auto* name : {"train", "convert_back"}) {
    const auto job =
        slurm.sbatch(std::vector<std::string>{"sbatch", fmt::format("--job-name={}", job_name(id, name))});
    REQUIRE(job);
    slurm.jobs[*job].state = state;
    StageRecord r;
    r.name = name;
    r.job_id = *job;
    m.stages.push_back(std::move(r));
  }
  REQUIRE(write_manifest(m));
  const nlohmann::json plan{{"total_steps", 20},
                            {"gbs", 8},
                            {"seq_len", 32},
                            {"nodes", 2},
                            {"checkpoint_dir", checkpoints.string()}};
  REQUIRE(write_file_atomic(m.run_dir / "plan.json", plan.dump()));
  return m.run_dir;
}

void checkpoint(const fs::path& dir, int step, bool done = true) {
  const auto tag = dir / fmt::format("step_{}", step);
  fs::create_directories(tag / "model");
  REQUIRE(write_file_atomic(tag / "model" / "shard.pt", "weights"));
  if (done) REQUIRE(write_file_atomic(tag / "done", "1"));
}

}  // namespace

TEST_CASE("chain_dirs: each chain writes a directory of its own under the recipe's") {
  CheckpointRecipe c;
  c.dir = "/fsx/ckpt/llama";
  c.converted_dir = "/fsx/converted/";
  c.export_dir = "s3://bucket/export";
  const auto a = chain_dirs(c, chain_a);
  CHECK(a.checkpoint == fmt::format("/fsx/ckpt/llama/{}", chain_a));
  CHECK(a.converted == fmt::format("/fsx/converted/{}", chain_a));
  CHECK(a.exported == fmt::format("s3://bucket/export/{}", chain_a));
  const auto b = chain_dirs(c, chain_b);
  CHECK(a.checkpoint != b.checkpoint);
  CHECK(a.exported != b.exported);

  // Shared, as before per-chain directories, when the recipe asks for it.
  c.per_chain = false;
  const auto shared = chain_dirs(c, chain_a);
  CHECK(shared.checkpoint == "/fsx/ckpt/llama");
  CHECK(shared.exported == "s3://bucket/export");
  CHECK(chain_dirs(c, chain_b).checkpoint == shared.checkpoint);

  CHECK(is_local_dir("/fsx/ckpt"));
  CHECK_FALSE(is_local_dir("s3://bucket/x"));
  CHECK_FALSE(is_local_dir(""));
}

TEST_CASE("chain_dirs: the recipe's checkpoint.per_chain is read, true unless set") {
  const auto* bundled = find_bundled_recipe("tiny-cpu");
  REQUIRE(bundled != nullptr);
  const std::string text(bundled->text);
  auto r = load_recipe_text(text, "tiny.toml");
  REQUIRE(r);
  CHECK(r->checkpoint.per_chain);
  auto shared = load_recipe_text(text, "tiny.toml", {{"checkpoint.per_chain", "false", ""}});
  REQUIRE(shared);
  CHECK_FALSE(shared->checkpoint.per_chain);
}

TEST_CASE("chain_dirs: placeholders, exports and the plan hold the chain's directories") {
  const auto* bundled = find_bundled_recipe("tiny-cpu");
  REQUIRE(bundled != nullptr);
  auto recipe = load_recipe_text(std::string(bundled->text), "/recipes/tiny.toml");
  REQUIRE(recipe);
  DatasetSize size;
  size.samples = 1000;
  size.format = "given";
  auto plan = make_plan(*recipe, size);
  REQUIRE(plan);
  auto in = chain_inputs_from_recipe(*recipe, to_json(*plan), std::string(chain_a), "/runs/x",
                                     {{"backend_dir", "/opt/cpu"}});
  REQUIRE(in);
  const auto mine = fmt::format("/recipes/checkpoints/{}", chain_a);
  CHECK(in->values.at("checkpoint_dir") == mine);
  CHECK(in->values.at("checkpoint.dir") == mine);
  CHECK(in->values.at("export_dir") == fmt::format("/recipes/export/{}", chain_a));
  CHECK(std::ranges::find(in->exports, std::pair<std::string, std::string>{"TRNSLURM_CHECKPOINT_DIR",
                                                                           mine}) != in->exports.end());
  CHECK(with_chain_dirs(to_json(*plan), chain_dirs(recipe->checkpoint, chain_a)).at("checkpoint_dir") ==
        mine);

  // The train script's wrapper and the trainer's --checkpoint_dir get the chain's directory.
  auto chain = render_chain(*in);
  REQUIRE(chain);
  const auto& train = chain->stages[2];
  REQUIRE(train.name == "train");
  CHECK(train.script.find(fmt::format("export TRNSLURM_CHECKPOINT_DIR='{}'", mine)) != std::string::npos);
  CHECK(train.script.find("resume_from") == std::string::npos);

  SECTION("resumed: no convert stage, every later stage links the source's checkpoint first") {
    in->resume_from = "/fsx/ckpt/other";
    auto resumed = render_chain(*in);
    REQUIRE(resumed);
    REQUIRE(resumed->stages.size() == 3);
    CHECK(resumed->stages.front().name == "precompile");
    for (const auto& s : resumed->stages) {
      CHECK(s.script.find("export TRNSLURM_RESUME_FROM='/fsx/ckpt/other'") != std::string::npos);
      CHECK(s.script.find("cp -al \"${TRNSLURM_RESUME_FROM}\"/\"$trn_from\"") != std::string::npos);
    }
    in->selection.only = "convert";
    auto refused = render_chain(*in);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().what.find("no convert stage") != std::string::npos);
  }
}

TEST_CASE("chain_dirs: a directory's mark names its chain, a damaged one is no mark") {
  ScratchDir tmp;
  const auto dir = tmp / "ckpt" / "x";
  CHECK_FALSE(read_dir_owner(dir));
  REQUIRE(mark_dir_owner(dir, DirOwner{std::string(chain_a), "/runs/a"}));
  const auto owner = read_dir_owner(dir);
  REQUIRE(owner);
  CHECK(owner->chain_id == chain_a);
  CHECK(owner->run_dir == "/runs/a");
  REQUIRE(
      write_file_atomic(dir / std::string(owner_file_name), R"({"chain_id": "../../etc", "run_dir": "/"})"));
  CHECK_FALSE(read_dir_owner(dir));
  REQUIRE(write_file_atomic(dir / std::string(owner_file_name), "{"));
  CHECK_FALSE(read_dir_owner(dir));
}

TEST_CASE("chain_dirs: a directory marked by a live chain is refused, by an ended one not") {
  ScratchDir tmp;
  FakeSlurm slurm;
  const auto ckpt = tmp / "ckpt";
  const auto run = chain_in(tmp / "runs", chain_a, ckpt, slurm, "RUNNING");
  REQUIRE(mark_dir_owner(ckpt, DirOwner{std::string(chain_a), run}));

  auto live = chain_is_live(DirOwner{std::string(chain_a), run}, slurm);
  REQUIRE(live);
  CHECK(*live);
  auto refused = check_dir_not_in_use(ckpt, chain_b, "checkpoint.dir", slurm);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what.find(fmt::format("in use by chain {}", chain_a)) != std::string::npos);
  CHECK(refused.error().hint.find("trnslurm cancel") != std::string::npos);
  // Its own chain may use it.
  CHECK(check_dir_not_in_use(ckpt, chain_a, "checkpoint.dir", slurm));

  for (auto& [id, job] : slurm.jobs) job.state = "COMPLETED";
  CHECK(check_dir_not_in_use(ckpt, chain_b, "checkpoint.dir", slurm));

  // The run directory gone: Slurm is asked by the jobs' names.
  for (auto& [id, job] : slurm.jobs) job.state = "PENDING";
  fs::remove_all(run);
  CHECK_FALSE(check_dir_not_in_use(ckpt, chain_b, "checkpoint.dir", slurm));
}

TEST_CASE("chain_dirs: --resume-from names a chain, its run directory or a checkpoint directory") {
  ScratchDir tmp;
  FakeSlurm slurm;
  const auto runs = tmp / "runs";
  const auto ckpt = tmp / "ckpt";
  const auto run = chain_in(runs, chain_a, ckpt, slurm, "COMPLETED");

  // No completed checkpoint yet: refused.
  checkpoint(ckpt, 4, false);
  auto none = find_resume_source(runs, chain_a, slurm);
  REQUIRE_FALSE(none);
  CHECK(none.error().what.find("no completed checkpoint") != std::string::npos);

  checkpoint(ckpt, 8);
  checkpoint(ckpt, 10);
  checkpoint(ckpt, 12, false);  // still being written
  for (const auto& given : {std::string(chain_a), run.string()}) {
    auto s = find_resume_source(runs, given, slurm);
    REQUIRE(s);
    CHECK(s->checkpoint_dir == ckpt);
    CHECK(s->step == 10);
    REQUIRE(s->chain);
    CHECK(s->chain->chain_id == chain_a);
  }
  auto by_dir = find_resume_source(runs, ckpt.string(), slurm);
  REQUIRE(by_dir);
  CHECK(by_dir->step == 10);
  CHECK_FALSE(by_dir->chain);  // no mark

  // A live chain's directory is refused before anything else is said of it.
  for (auto& [id, job] : slurm.jobs) job.state = "RUNNING";
  auto live = find_resume_source(runs, chain_a, slurm);
  REQUIRE_FALSE(live);
  CHECK(live.error().what.find("in use by chain") != std::string::npos);

  auto missing = find_resume_source(runs, "20261124-120000-000-0000000c", slurm);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what.find("neither a chain") != std::string::npos);
}

TEST_CASE("chain_dirs: the newest-step pipeline finds the newest complete step of either layout") {
  test::ScratchDir dir;
  const auto run = [&](const std::filesystem::path& d) {
    const auto pipeline = newest_step_pipeline("\"$1\"");
    auto r = run_process({"/bin/bash", "-c", pipeline, "bash", d.string()},
                         RunOptions{.limit = std::chrono::seconds(10), .env = {{"PATH=/usr/bin:/bin"}}});
    REQUIRE(r);
    REQUIRE(r->exit_code == 0);
    CHECK(r->err.empty());
    auto out = r->out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  CHECK(run(dir / "missing").empty());
  const auto touch = [](const std::filesystem::path& p) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << "";
  };
  touch(dir / "nxd/step_2/done");
  touch(dir / "nxd/step_10/done");
  touch(dir / "nxd/step_12/model.pt");  // no done: still being written
  CHECK(run(dir / "nxd") == "step_10");
  touch(dir / "dcp/step-5/.metadata");
  touch(dir / "dcp/step-40/.metadata");
  touch(dir / "dcp/step-100/__0_0.distcp");  // no .metadata
  touch(dir / "dcp/step-x/.metadata");
  CHECK(run(dir / "dcp") == "step-40");
}

TEST_CASE("chain_dirs: the newest-step pipeline is one text for newest_checkpoint and the resume") {
  const auto p = newest_step_pipeline("{{x}}");
  CHECK(p.starts_with("find {{x}} "));
  CHECK(p.find("sort -n | tail -n 1") != std::string::npos);
  const auto prologue = resume_prologue();
  CHECK(prologue.find(newest_step_pipeline("{{checkpoint_dir}}")) != std::string::npos);
  CHECK(prologue.find(newest_step_pipeline("{{resume_from}}")) != std::string::npos);
}
