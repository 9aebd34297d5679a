#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "chain/fake_slurm.hpp"
#include "fixtures.hpp"
#include "trnslurm/submit/submit_cache.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;
using trnslurm::test::ScratchDir;

namespace {

struct Cached {
  ScratchDir dir;
  Recipe recipe;
  Plan plan;

  explicit Cached(bool enabled = true) {
    const auto text = fmt::format(R"([model]
name = "fixture"
layers = 2
hidden = 64
heads = 4
vocab = 256
seq_len = 32
[cluster]
instance = "cpu"
nodes = 2
cores_per_node = 2
[train]
tp = 2
gbs = 8
lr = 3e-4
[cache]
enabled = {1}
dir = "{0}/cache"
[stages.convert]
command = "true"
[stages.precompile]
command = "true"
[stages.train]
command = "true"
[stages.convert_back]
command = "true"
)",
                                  dir.path().string(), enabled);
    auto r = load_recipe_text(text, (dir / "recipe.toml").string());
    REQUIRE(r);
    recipe = std::move(*r);
    DatasetSize size;
    size.samples = 1000;
    size.format = "given";
    auto p = make_plan(recipe, size);
    REQUIRE(p);
    plan = std::move(*p);
  }
  SubmitCache prepared(PrecompileMode mode, bool dry_run = false) {
    auto c = prepare_cache(recipe, plan, mode, dry_run, {});
    REQUIRE(c);
    REQUIRE(*c);
    return std::move(**c);
  }
};

ChainSpec chain_of(std::string id, const std::filesystem::path& run_dir) {
  ChainSpec c;
  c.chain_id = std::move(id);
  c.run_dir = run_dir;
  for (auto s : stage_names) c.stages.push_back(StageSpec{std::string(s), "", 1, "", {}, {}});
  return c;
}

// Another chain that compiles the key: its use recorded with precompile job `job`.
void other_compiles(const SubmitCache& c, JobId job) {
  KeyUse use;
  use.chain_id = "20261127-000000-000-00000001";
  use.run_dir = "/runs/other";
  use.precompile = PrecompileRole::compiles;
  use.precompile_job = job;
  use.jobs = {job};
  REQUIRE(record_use(c.loc, c.key, use));
}

}  // namespace

TEST_CASE("submit_cache: a recipe without a compile cache has no cache step") {
  Cached s(false);
  auto c = prepare_cache(s.recipe, s.plan, PrecompileMode::automatic, false, {});
  REQUIRE(c);
  CHECK_FALSE(*c);
}

TEST_CASE("submit_cache: another chain's compile of the key is found in the queue and waited for") {
  Cached s;
  auto c = s.prepared(PrecompileMode::automatic);
  CHECK(c.lock);  // a real submit holds the key
  FakeSlurm slurm;
  slurm.set(500, "RUNNING");
  other_compiles(c, 500);
  REQUIRE(find_live_compile(c, false, slurm));
  CHECK(slurm.asked == std::vector<JobId>{500});
  REQUIRE(c.live);
  CHECK(c.live->job == 500);
  auto chain = chain_of("20261127-000000-000-00000002", s.dir / "runs" / "x");
  apply_cache(c, chain);
  CHECK(c.decision.role == PrecompileRole::waits);
  REQUIRE(chain.stages.size() == 4);
  CHECK(chain.stages[1].also_after == std::vector<std::string>{"afterany:500"});
}

TEST_CASE("submit_cache: Slurm is not asked when its answer cannot matter") {
  Cached s;
  FakeSlurm slurm;
  SECTION("a dry run") {
    auto c = s.prepared(PrecompileMode::automatic, true);
    CHECK_FALSE(c.lock);
    other_compiles(c, 500);
    REQUIRE(find_live_compile(c, true, slurm));
  }
  SECTION("--precompile=never") {
    auto c = s.prepared(PrecompileMode::never);
    other_compiles(c, 500);
    REQUIRE(find_live_compile(c, false, slurm));
  }
  SECTION("no chain used the key") {
    auto c = s.prepared(PrecompileMode::always);
    REQUIRE(find_live_compile(c, false, slurm));
  }
  CHECK(slurm.squeue_calls == 0);
}

TEST_CASE("submit_cache: squeue failing is an error, not a cold key") {
  Cached s;
  auto c = s.prepared(PrecompileMode::automatic);
  other_compiles(c, 500);
  FakeSlurm slurm;
  slurm.squeue_error = "squeue: error: Unable to contact slurm controller";
  auto r = find_live_compile(c, false, slurm);
  REQUIRE_FALSE(r);
  CHECK(r.error().what == slurm.squeue_error);
  CHECK_FALSE(c.live);
}

TEST_CASE("submit_cache: a warm key's precompile is left out and the chain's use recorded") {
  Cached s;
  auto c = s.prepared(PrecompileMode::automatic);
  c.warm = WarmRecord{c.key.hex, "20261127-000000-000-00000001", "77", "2026-11-27T00:00:00Z", "n1"};
  const auto run_dir = s.dir / "runs" / "20261127-000000-000-00000002";
  std::filesystem::create_directories(run_dir);
  auto chain = chain_of("20261127-000000-000-00000002", run_dir);
  apply_cache(c, chain);
  CHECK(c.decision.role == PrecompileRole::skipped);
  REQUIRE(chain.stages.size() == 3);
  CHECK(std::ranges::find(chain.stages, "precompile", &StageSpec::name) == chain.stages.end());
  auto note = record_cache(c, chain, "2026-11-27T01:00:00Z", {100, 101, 102}, false);
  REQUIRE(note);
  CHECK(*note ==
        fmt::format("compile key {}: precompile skipped: cache warm since 2026-11-27T00:00:00Z, chain "
                    "20261127-000000-000-00000001",
                    c.key.hex));
  const auto uses = read_uses(c.loc, c.key.hex);
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].jobs == std::vector<JobId>{101});  // train: the only stage of it that uses the cache
  const auto recorded = read_chain_cache(run_dir);
  REQUIRE(recorded);
  CHECK(recorded->key == c.key.hex);
  CHECK(nothing_to_compile(c) ==
        "precompile skipped: cache warm since 2026-11-27T00:00:00Z, chain 20261127-000000-000-00000001");
}

TEST_CASE("submit_cache: a record that cannot be written is an error") {
  Cached s;
  auto c = s.prepared(PrecompileMode::automatic);
  auto chain = chain_of("20261127-000000-000-00000002", s.dir / "no" / "such" / "run");
  apply_cache(c, chain);
  auto note = record_cache(c, chain, "2026-11-27T01:00:00Z", {100, 101, 102, 103}, true);
  CHECK_FALSE(note);
}
