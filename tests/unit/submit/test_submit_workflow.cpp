#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "chain/fake_slurm.hpp"
#include "fixtures.hpp"
#include "trnslurm/submit/submit_workflow.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;
using trnslurm::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

// A recipe of four plain commands whose runs, checkpoints and compile cache live in `dir`;
// `extra` is appended (more keys of its sections are not allowed twice: give whole sections).
struct Submit {
  ScratchDir dir;
  Recipe recipe;
  Plan plan;
  SubmitRequest request;
  SubmitContext context;
  FakeSlurm slurm;
  std::uint32_t draws = 0;

  explicit Submit(const std::string& checkpoint = "", const std::string& extra = "") {
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
[run]
runs_dir = "{0}/runs"
[checkpoint]
dir = "{0}/checkpoints"
{1}
[cache]
dir = "{0}/cache"
[stages.convert]
command = "true"
[stages.precompile]
command = "true"
[stages.train]
command = "true"
[stages.convert_back]
command = "true"
{2})",
                                  dir.path().string(), checkpoint, extra);
    auto r = load_recipe_text(text, (dir / "recipe.toml").string());
    REQUIRE(r);
    recipe = std::move(*r);
    DatasetSize size;
    size.samples = 1000;
    size.format = "given";
    auto p = make_plan(recipe, size);
    REQUIRE(p);
    plan = std::move(*p);
    request.runs_dir = recipe.run.runs_dir;
    context.now = [] { return std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)); };
    context.random = [this] { return ++draws; };
    context.pause = [](std::chrono::milliseconds) {};
  }
  std::expected<SubmitOutcome, SubmitError> run() {
    return submit_chain_of_recipe(recipe, plan, request, slurm, context);
  }
  std::vector<fs::path> run_dirs() const {
    std::vector<fs::path> out;
    if (fs::exists(request.runs_dir))
      for (const auto& e : fs::directory_iterator(request.runs_dir)) out.push_back(e.path());
    return out;
  }
  // Jobs the fake still has pending or running.
  std::vector<JobId> active() const {
    std::vector<JobId> out;
    for (const auto& [id, row] : slurm.jobs)
      if (is_active(phase_of(row))) out.push_back(id);
    return out;
  }
};

// A fake whose sbatch throws at one call, after the job was made: its id never comes back.
class ThrowingSlurm : public FakeSlurm {
 public:
  int throw_at = -1;
  Result<JobId> sbatch(const std::vector<std::string>& argv) override {
    auto id = FakeSlurm::sbatch(argv);
    if (static_cast<int>(sbatch_calls.size()) - 1 == throw_at)
      throw std::runtime_error("sbatch runner broke");
    return id;
  }
};

}  // namespace

TEST_CASE("submit_workflow: a submit puts every stage in the queue and records it in its run directory") {
  Submit s;
  auto done = s.run();
  REQUIRE(done);
  CHECK(done->kind == SubmitKind::submitted);
  CHECK(done->ids == std::vector<JobId>{100, 101, 102, 103});
  CHECK(s.slurm.sbatch_calls.size() == 4);
  CHECK(s.slurm.cancelled.empty());
  CHECK(done->problems.empty());
  auto m = read_manifest(done->chain.run_dir);
  REQUIRE(m);
  CHECK(m->state == ManifestState::submitted);
  CHECK(m->stages.at(2).job_id == JobId{102});
  CHECK(fs::exists(done->chain.run_dir / "plan.json"));
  CHECK(fs::exists(script_path(done->chain, 3)));
  // The submit lock is released with the outcome; the checkpoint directory is the chain's.
  CHECK_FALSE(submission_in_progress(done->chain.run_dir));
  const auto owner = read_dir_owner(done->dirs.checkpoint);
  REQUIRE(owner);
  CHECK(owner->chain_id == done->chain.chain_id);
  // The compile cache records the chain's use of its key.
  CHECK(done->cache_note.starts_with("compile key "));
  CHECK(fs::exists(done->chain.run_dir / "compile-cache.json"));
}

TEST_CASE("submit_workflow: a dry run writes its run directory and asks nothing of Slurm") {
  Submit s;
  s.request.dry_run = true;
  auto done = s.run();
  REQUIRE(done);
  CHECK(done->kind == SubmitKind::dry_run);
  CHECK(done->ids.empty());
  CHECK(s.slurm.sbatch_calls.empty());
  CHECK(s.slurm.squeue_calls == 0);
  CHECK(s.slurm.cancelled.empty());
  auto m = read_manifest(done->chain.run_dir);
  REQUIRE(m);
  CHECK(m->state == ManifestState::dry_run);
  CHECK_FALSE(m->stages.at(0).job_id);
  CHECK_FALSE(fs::exists(done->dirs.checkpoint));  // not marked: no chain will write it
}

TEST_CASE("submit_workflow: an sbatch failing at stage k cancels what was submitted and records it") {
  const int k = GENERATE(0, 1, 2, 3);
  Submit s;
  s.slurm.fail_at_call = k;
  auto done = s.run();
  REQUIRE_FALSE(done);
  const auto& f = done.error();
  CHECK(f.kind == ErrorKind::slurm);
  CHECK(f.submission_started);
  CHECK(f.error.what == s.slurm.fail_message);
  std::vector<JobId> submitted;
  for (int j = 0; j < k; ++j) submitted.push_back(100 + static_cast<JobId>(j));
  CHECK(f.rollback.cancelled == submitted);
  CHECK(f.rollback.remaining.empty());
  CHECK(s.active().empty());
  const auto dirs = s.run_dirs();
  REQUIRE(dirs.size() == 1);
  CHECK(dirs[0].filename() == f.chain_id);
  auto m = read_manifest(dirs[0]);
  REQUIRE(m);
  CHECK(m->state == ManifestState::rolled_back);
}

TEST_CASE("submit_workflow: a rollback that cannot cancel is recorded rollback-failed with every id") {
  Submit s;
  s.slurm.fail_at_call = 2;
  s.slurm.scancel_failures = 100;
  auto done = s.run();
  REQUIRE_FALSE(done);
  CHECK(done.error().rollback.remaining == std::vector<JobId>{100, 101});
  CHECK(done.error().error.hint.find("cancelling the jobs already submitted failed too") !=
        std::string::npos);
  auto m = read_manifest(s.run_dirs().at(0));
  REQUIRE(m);
  CHECK(m->state == ManifestState::rollback_failed);
}

TEST_CASE(
    "submit_workflow: an exception mid-way cancels the submitted jobs and records the chain rolled back") {
  SECTION("thrown between two sbatch") {
    Submit s;
    int asked = 0;
    // Asked before each sbatch: the third time is before train's.
    s.context.interrupted = [&]() -> bool {
      if (++asked == 3) throw std::runtime_error("something broke");
      return false;
    };
    auto done = s.run();
    REQUIRE_FALSE(done);
    CHECK(done.error().kind == ErrorKind::internal);
    CHECK(done.error().error.what == "something broke");
    CHECK(done.error().rollback.cancelled == std::vector<JobId>{100, 101});
    CHECK(s.active().empty());
    auto m = read_manifest(s.run_dirs().at(0));
    REQUIRE(m);
    CHECK(m->state == ManifestState::rolled_back);
  }
  SECTION("thrown by the Slurm client after the job was made: found by its name") {
    Submit s;
    ThrowingSlurm slurm;
    slurm.throw_at = 1;
    auto done = submit_chain_of_recipe(s.recipe, s.plan, s.request, slurm, s.context);
    REQUIRE_FALSE(done);
    CHECK(done.error().kind == ErrorKind::internal);
    auto cancelled = done.error().rollback.cancelled;
    std::ranges::sort(cancelled);
    CHECK(cancelled == std::vector<JobId>{100, 101});
    CHECK(slurm.jobs.at(101).state == "CANCELLED");
  }
  SECTION("a record that cannot be encoded (the run's plan.json), written beside the first sbatch") {
    Submit s;
    s.plan.dataset.format = "given\xff";  // not UTF-8: the JSON writer throws
    auto done = s.run();
    REQUIRE_FALSE(done);
    CHECK(done.error().kind == ErrorKind::internal);
    CHECK(done.error().rollback.cancelled == std::vector<JobId>{100});
    CHECK(s.active().empty());
    auto m = read_manifest(s.run_dirs().at(0));
    REQUIRE(m);
    CHECK(m->state == ManifestState::rolled_back);
    CHECK(m->stages.at(0).job_id == JobId{100});
  }
}

TEST_CASE("submit_workflow: Ctrl-C between two sbatch rolls back") {
  Submit s;
  int asked = 0;
  s.context.interrupted = [&] { return ++asked == 2; };
  auto done = s.run();
  REQUIRE_FALSE(done);
  CHECK(done.error().kind == ErrorKind::interrupted);
  CHECK(done.error().rollback.cancelled == std::vector<JobId>{100});
  CHECK(s.active().empty());
}

TEST_CASE(
    "submit_workflow: a checkpoint directory a submit in progress holds is refused before anything exists") {
  // per_chain = false: every chain of the recipe shares the directory. Another chain's submit
  // holds its run directory's lock and has marked the directory.
  Submit s("per_chain = false");
  const auto other = *create_run_dir(s.request.runs_dir, "20261127-000000-000-00000001");
  auto held = lock_submission(other);
  REQUIRE(held);
  REQUIRE(mark_dir_owner(s.recipe.checkpoint.dir, DirOwner{"20261127-000000-000-00000001", other}));
  auto done = s.run();
  REQUIRE_FALSE(done);
  CHECK(done.error().kind == ErrorKind::input);
  CHECK_FALSE(done.error().submission_started);
  CHECK(s.slurm.sbatch_calls.empty());
  CHECK(s.run_dirs() == std::vector<fs::path>{other});
}

TEST_CASE("submit_workflow: a failure before the first sbatch leaves no run directory") {
  Submit s;
  // The checkpoint directory cannot be made: its parent is a file.
  REQUIRE(write_file_atomic(s.dir / "checkpoints", "not a directory"));
  auto done = s.run();
  REQUIRE_FALSE(done);
  CHECK(done.error().kind == ErrorKind::local);
  CHECK_FALSE(done.error().submission_started);
  CHECK(s.slurm.sbatch_calls.empty());
  CHECK(s.run_dirs().empty());
}

TEST_CASE("submit_workflow: bad requests are refused with nothing created") {
  Submit s;
  // Checked inside each section: Catch counts a section without assertions as a failure.
  const auto refused = [&s] {
    auto done = s.run();
    REQUIRE_FALSE(done);
    CHECK(done.error().kind == ErrorKind::input);
    CHECK(s.slurm.sbatch_calls.empty());
    CHECK(s.run_dirs().empty());
  };
  SECTION("a stage argument for no stage") {
    s.request.stage_args = {"nope=--partition=x"};
    refused();
  }
  SECTION("a resume source that does not exist") {
    s.request.resume_from = "20990101-000000-000-00000000";
    refused();
  }
}

TEST_CASE("submit_workflow: a chain id whose run directory exists is drawn again") {
  Submit s;
  // The first draw's directory is taken.
  fs::create_directories(s.request.runs_dir / make_chain_id(s.context.now(), 1));
  auto done = s.run();
  REQUIRE(done);
  CHECK(done->chain.chain_id == make_chain_id(s.context.now(), 2));
}

TEST_CASE("submit_workflow: only a precompile the cache leaves out is nothing to submit") {
  Submit s;
  s.request.selection.only = "precompile";
  s.request.precompile = PrecompileMode::never;
  auto done = s.run();
  REQUIRE(done);
  CHECK(done->kind == SubmitKind::nothing_to_submit);
  REQUIRE(done->cache);
  CHECK(nothing_to_compile(*done->cache) == "precompile not run (--precompile=never)");
  CHECK(s.slurm.sbatch_calls.empty());
  CHECK(s.run_dirs().empty());
}
