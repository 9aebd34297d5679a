#include <catch2/catch.hpp>

#include "fake_slurm.hpp"
#include "fixtures.hpp"
#include "trnslurm/chain/chain_status.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;

namespace {

constexpr std::string_view chain_id = "20261122-010203-000-0000abcd";

// A chain of four stages submitted to `slurm` (ids 100..103), with its run directory under `runs`.
Manifest submitted_chain(const std::filesystem::path& runs, FakeSlurm& slurm,
                         ManifestState state = ManifestState::submitted) {
  ChainSpec spec;
  spec.chain_id = chain_id;
  for (auto s : stage_names) spec.stages.push_back(StageSpec{std::string(s), "", 1, "", {}, {}});
  const auto ids = submit_chain(spec, slurm);
  REQUIRE(ids);
  Manifest m;
  m.chain_id = chain_id;
  m.state = state;
  m.run_dir = create_run_dir(runs, chain_id).value();
  for (std::size_t i = 0; i < ids->size(); ++i) {
    StageRecord r;
    r.name = stage_names[i];
    r.job_id = (*ids)[i];
    m.stages.push_back(std::move(r));
  }
  REQUIRE(write_manifest(m));
  return m;
}

StageStatus stage(std::string name, std::optional<JobId> id, JobPhase phase) {
  StageStatus s;
  s.name = std::move(name);
  s.job_id = id;
  s.phase = phase;
  return s;
}

}  // namespace

TEST_CASE("chain_status: logs shows the stage asked for, else the failed, running or last started one") {
  ChainStatus status;
  status.stages = {stage("convert", 1, JobPhase::succeeded), stage("precompile", 2, JobPhase::succeeded),
                   stage("train", 3, JobPhase::running), stage("convert_back", 4, JobPhase::pending)};
  CHECK(stage_to_show(status, "precompile").value() == 1);
  CHECK(stage_to_show(status, "").value() == 2);  // running
  status.stages[2].phase = JobPhase::succeeded;
  CHECK(stage_to_show(status, "").value() == 2);  // the last one that started
  status.failed_stage = 1;
  CHECK(stage_to_show(status, "").value() == 1);

  ChainStatus none;
  none.stages = {stage("convert", std::nullopt, JobPhase::unknown),
                 stage("train", std::nullopt, JobPhase::unknown)};
  CHECK(stage_to_show(none, "").value() == 0);

  const auto unknown = stage_to_show(status, "trian");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().where == "--stage");
  CHECK(unknown.error().hint == "its stages: convert, precompile, train, convert_back");
}

TEST_CASE("chain_status: a chain is found in its run directory, a dry run is refused") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  const auto m = submitted_chain(runs.path(), slurm);
  const auto newest = load_chain(runs.path(), "", slurm);
  REQUIRE(newest);
  CHECK(newest->chain_id == chain_id);
  REQUIRE(newest->manifest);
  CHECK(newest->stages.size() == 4);
  CHECK(newest->stages[2].job_id == JobId{102});

  REQUIRE(record_state(m.run_dir, ManifestState::dry_run));
  const auto dry = load_chain(runs.path(), chain_id, slurm);
  REQUIRE_FALSE(dry);
  CHECK(dry.error().what.find("dry run") != std::string::npos);
}

TEST_CASE("chain_status: without its run directory a chain is found in Slurm by its jobs' names") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  const auto m = submitted_chain(runs.path(), slurm);
  std::filesystem::remove_all(m.run_dir);
  const auto found = load_chain(runs.path(), chain_id, slurm);
  REQUIRE(found);
  CHECK_FALSE(found->manifest);
  REQUIRE(found->stages.size() == 4);
  CHECK(found->stages[0].job_id == JobId{100});
  CHECK_FALSE(load_chain(runs.path(), "", slurm));  // the newest needs a run directory
}

TEST_CASE("chain_status: a refresh cancels blocked stages and records the states seen") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  submitted_chain(runs.path(), slurm);
  slurm.set(100, "COMPLETED");
  slurm.set(101, "FAILED", "NonZeroExitCode", "1:0");
  auto chain = load_chain(runs.path(), "", slurm);
  REQUIRE(chain);
  const auto status = refresh_status(*chain, slurm);
  REQUIRE(status);
  CHECK(status->verdict == ChainVerdict::failed);
  CHECK(status->failed_stage == std::size_t{1});
  CHECK(slurm.cancelled == std::vector<JobId>{102, 103});  // blocked behind the failure

  const auto on_disk = read_manifest(chain->manifest->run_dir);
  REQUIRE(on_disk);
  CHECK(on_disk->stages[0].last_state == "COMPLETED");
  CHECK(on_disk->stages[1].last_state == "FAILED");
  CHECK(on_disk->stages[1].last_exit_code == "1:0");
  CHECK(on_disk->stages[2].last_state == "CANCELLED");
  CHECK(chain->stages[1].last_state == "FAILED");
}

TEST_CASE("chain_status: a submit that died before recording an id leaves nothing behind") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  const auto m = submitted_chain(runs.path(), slurm, ManifestState::submitting);
  // As if submit was killed after sbatch created train (102) but before the id reached the
  // journal: only convert and precompile are known locally.
  auto on_disk = m;
  on_disk.stages[2].job_id.reset();
  on_disk.stages[3].job_id.reset();
  REQUIRE(write_manifest(on_disk));
  slurm.jobs.erase(103);
  slurm.set(100, "RUNNING");

  SECTION("a submit still holding its lock is left alone") {
    auto lock = lock_submission(m.run_dir);
    REQUIRE(lock);
    CHECK(submission_in_progress(m.run_dir));
    CHECK_FALSE(lock_submission(m.run_dir));  // one submit per run directory
    auto chain = load_chain(runs.path(), "", slurm);
    REQUIRE(chain);
    REQUIRE(refresh_status(*chain, slurm));
    CHECK(slurm.cancelled.empty());
    CHECK_FALSE(chain->leftovers);
  }
  SECTION("status finds the unrecorded job by name and cancels everything") {
    std::filesystem::remove(m.run_dir / "submit.lock");
    CHECK_FALSE(submission_in_progress(m.run_dir));
    auto chain = load_chain(runs.path(), "", slurm);
    REQUIRE(chain);
    const auto status = refresh_status(*chain, slurm);
    REQUIRE(status);
    REQUIRE(chain->leftovers);
    CHECK(chain->leftovers->cancelled == std::vector<JobId>{100, 101, 102});
    CHECK(chain->leftovers->remaining.empty());
    for (JobId id : {100u, 101u, 102u}) CHECK(slurm.jobs[id].state == "CANCELLED");
    const auto after = read_manifest(m.run_dir);
    REQUIRE(after);
    CHECK(after->state == ManifestState::rolled_back);
    CHECK(after->stages[2].job_id == JobId{102});  // recorded now
    // Once rolled back, status no longer looks for leftovers.
    slurm.cancelled.clear();
    auto again = load_chain(runs.path(), "", slurm);
    REQUIRE(again);
    REQUIRE(refresh_status(*again, slurm));
    CHECK_FALSE(again->leftovers);
    CHECK(slurm.cancelled.empty());
  }
  SECTION("a lock released (the submit ended or died) reads as no submit in progress") {
    {
      auto lock = lock_submission(m.run_dir);
      REQUIRE(lock);
    }
    CHECK_FALSE(submission_in_progress(m.run_dir));
  }
}

TEST_CASE("chain_status: a failed rollback is retried by the next status") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  const auto m = submitted_chain(runs.path(), slurm, ManifestState::rollback_failed);
  slurm.scancel_failures = 1;
  auto chain = load_chain(runs.path(), "", slurm);
  REQUIRE(chain);
  CHECK_FALSE(refresh_status(*chain, slurm));  // scancel failed: an error, state unchanged
  CHECK(read_manifest(m.run_dir)->state == ManifestState::rollback_failed);
  REQUIRE(refresh_status(*chain, slurm));
  CHECK(chain->leftovers->cancelled.size() == 4);
  CHECK(read_manifest(m.run_dir)->state == ManifestState::rolled_back);
}

TEST_CASE("chain_status: cancel also cancels jobs never recorded") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  auto m = submitted_chain(runs.path(), slurm);
  m.stages[3].job_id.reset();
  REQUIRE(write_manifest(m));
  auto chain = load_chain(runs.path(), "", slurm);
  REQUIRE(chain);
  const auto r = cancel_chain(
      *chain, slurm, [](auto) {}, std::chrono::seconds(1));
  REQUIRE(r);
  CHECK(r->cancelled == std::vector<JobId>{100, 101, 102, 103});
  CHECK(read_manifest(m.run_dir)->stages[3].job_id == JobId{103});
}

TEST_CASE(
    "chain_status: several chains are refreshed with one squeue call, and recorded ends are not asked "
    "again") {
  const test::ScratchDir runs;
  FakeSlurm slurm;
  const auto m = submitted_chain(runs.path(), slurm);  // ids 100..103
  for (JobId id = 100; id <= 103; ++id) slurm.set(id, "COMPLETED");
  auto first = load_chain(runs.path(), "", slurm);
  REQUIRE(first);
  std::vector<LoadedChain> chains{*first, *first};
  slurm.squeue_calls = 0;
  const auto statuses = refresh_statuses(chains, slurm);
  REQUIRE(statuses);
  REQUIRE(statuses->size() == 2);
  CHECK((*statuses)[1].verdict == ChainVerdict::succeeded);
  CHECK(slurm.squeue_calls == 1);
  // Every end is recorded now: the next refresh asks Slurm nothing.
  auto again = load_chain(runs.path(), "", slurm);
  REQUIRE(again);
  REQUIRE(refresh_status(*again, slurm));
  CHECK(slurm.squeue_calls == 1);
  CHECK(read_manifest(m.run_dir)->stages[3].last_state == "COMPLETED");
}
