#include <catch2/catch.hpp>

#include <fstream>

#include "../fixtures.hpp"
#include "trnslurm/chain/chain_progress.hpp"
#include "trnslurm/chain/run_dir.hpp"

using namespace trnslurm;

namespace {
void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
}  // namespace

TEST_CASE("chain progress: the newest completed checkpoint") {
  test::ScratchDir dir;
  CHECK_FALSE(newest_completed_checkpoint(dir / "none"));
  write(dir / "step_2/done", "");
  write(dir / "step_10/done", "");
  std::filesystem::create_directories(dir / "step_12");  // being written: no done file
  write(dir / "step_x/done", "");
  write(dir / "pretrained_weight/done", "");
  const auto mark = newest_completed_checkpoint(dir.path());
  REQUIRE(mark);
  CHECK(mark->step == 10u);
  CHECK(mark->time > 0);
  CHECK(mark->path == dir / "step_10");
}

TEST_CASE("chain progress: TorchTitan's DCP checkpoints are complete once their .metadata is written") {
  test::ScratchDir dir;
  write(dir / "step-5/.metadata", "");
  write(dir / "step-5/__0_0.distcp", "");
  write(dir / "step-20/__0_0.distcp", "");  // shards written, .metadata not yet: incomplete
  write(dir / "step-/.metadata", "");
  const auto mark = newest_completed_checkpoint(dir.path());
  REQUIRE(mark);
  CHECK(mark->step == 5u);
  CHECK(mark->path == dir / "step-5");
  CHECK(checkpoint_layout_of("step-3")->marker == ".metadata");
  CHECK(checkpoint_layout_of("step_3")->marker == "done");
  CHECK(checkpoint_layout_of("step-") == nullptr);
  CHECK(checkpoint_layout_of("steps") == nullptr);
}

TEST_CASE("chain progress: a run's figures from plan.json, and the rate it measured") {
  test::ScratchDir dir;
  CHECK_FALSE(read_run_figures(dir.path()));
  write(dir / "plan.json", R"({"total_steps": 100, "gbs": 8, "seq_len": 32, "nodes": 2,
    "checkpoint_dir": "/ckpt", "estimate": {"tokens_per_second_per_node": 2000}})");
  auto f = read_run_figures(dir.path());
  REQUIRE(f);
  CHECK(f->total_steps == 100u);
  CHECK(f->checkpoint_dir == "/ckpt");
  CHECK(f->estimate_tokens_per_second_per_node == 2000.0);
  write(dir / "plan.json", R"({"total_steps": "many"})");
  CHECK_FALSE(read_run_figures(dir.path()));

  write(dir / "plan.json", R"({"total_steps": 100, "gbs": 8, "seq_len": 32, "nodes": 2})");
  Manifest m;
  m.chain_id = "20261124-000000-000-00000000";
  m.run_dir = dir.path();
  m.state = ManifestState::submitted;
  m.stages.emplace_back();
  m.stages.back().name = "train";
  m.stages.back().job_id = 7;
  REQUIRE(write_manifest(m));
  auto none = measured_rate(dir.path());
  REQUIRE_FALSE(none);
  CHECK(none.error().what.find("no throughput measured") != std::string::npos);
  write(dir / "logs/train-7.out",
        "step 0 step_time 0.5s throughput 10 seq/s step loss 2 grad norm 1\n"
        "step 1 step_time 0.5s throughput 30 seq/s step loss 2 grad norm 1\n");
  auto rate = measured_rate(dir.path());
  REQUIRE(rate);
  CHECK(rate->tokens_per_second_per_node == Approx(20.0 * 32 / 2));
  CHECK(rate->step == 2u);
}
