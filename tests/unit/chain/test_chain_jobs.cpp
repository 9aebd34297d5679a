#include <catch2/catch.hpp>

#include <algorithm>

#include "fake_slurm.hpp"
#include "trnslurm/chain/chain_jobs.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;

namespace {
ChainSpec four_stages() {
  ChainSpec c;
  c.chain_id = "20261122-010203-0000abcd";
  c.run_dir = "/runs/x";
  for (auto s : stage_names) c.stages.push_back(StageSpec{std::string(s), "", 1, "", {}, {}});
  return c;
}
std::vector<StageRef> refs(std::vector<std::optional<JobId>> ids) {
  std::vector<StageRef> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    StageRef r;
    r.name = stage_names[i];
    r.job_id = ids[i];
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

TEST_CASE("chain_jobs: submit chains every stage on the one before") {
  FakeSlurm slurm;
  std::vector<std::pair<std::size_t, JobId>> seen;
  SubmitHooks hooks;
  hooks.submitted = [&](std::size_t k, JobId id) {
    seen.emplace_back(k, id);
    return Result<void>{};
  };
  auto ids = submit_chain(four_stages(), slurm, hooks);
  REQUIRE(ids);
  CHECK(*ids == std::vector<JobId>{100, 101, 102, 103});
  CHECK(seen.size() == 4);
  REQUIRE(slurm.sbatch_calls.size() == 4);
  const auto& c = slurm.sbatch_calls;
  CHECK(std::none_of(c[0].begin(), c[0].end(), [](auto& a) { return a.starts_with("--dependency"); }));
  CHECK(std::find(c[1].begin(), c[1].end(), "--dependency=afterok:100") != c[1].end());
  CHECK(std::find(c[3].begin(), c[3].end(), "--dependency=afterok:102") != c[3].end());
  CHECK(slurm.cancelled.empty());
}

TEST_CASE("chain_jobs: an sbatch failing at stage k cancels stages 1..k-1") {
  const int k = GENERATE(0, 1, 2, 3);
  FakeSlurm slurm;
  slurm.fail_at_call = k;
  auto r = submit_chain(four_stages(), slurm);
  REQUIRE_FALSE(r);
  CHECK(r.error().stage == static_cast<std::size_t>(k));
  CHECK(r.error().error.what == "sbatch: error: invalid partition specified: nope");
  CHECK(r.error().error.where.find(std::string(stage_names[static_cast<std::size_t>(k)])) !=
        std::string::npos);
  CHECK(slurm.sbatch_calls.size() == static_cast<std::size_t>(k + 1));
  CHECK(slurm.cancelled.size() == static_cast<std::size_t>(k));
  CHECK(r.error().rollback.remaining.empty());
  for (const auto& [id, job] : slurm.jobs) CHECK(job.state == "CANCELLED");
}

TEST_CASE("chain_jobs: rollback waits until cancelled jobs are gone") {
  FakeSlurm slurm;
  slurm.fail_at_call = 2;
  slurm.cancel_delay = 3;
  int pauses = 0;
  SubmitHooks hooks;
  hooks.pause = [&](std::chrono::milliseconds) { ++pauses; };
  auto r = submit_chain(four_stages(), slurm, hooks);
  REQUIRE_FALSE(r);
  CHECK(r.error().rollback.remaining.empty());
  CHECK(pauses == 2);
  CHECK(slurm.squeue_calls == 3);
}

TEST_CASE("chain_jobs: rollback reports jobs that refuse to go") {
  FakeSlurm slurm;
  slurm.fail_at_call = 1;
  slurm.cancel_delay = 1'000'000;
  auto r = submit_chain(four_stages(), slurm);
  REQUIRE_FALSE(r);
  CHECK(r.error().rollback.remaining == std::vector<JobId>{100});
}

TEST_CASE("chain_jobs: a rollback whose scancel fails is retried, and reported when it never works") {
  FakeSlurm slurm;
  slurm.fail_at_call = 2;
  SECTION("scancel works at the third try") {
    slurm.scancel_failures = 2;
    auto r = submit_chain(four_stages(), slurm);
    REQUIRE_FALSE(r);
    CHECK(r.error().rollback.cancelled == std::vector<JobId>{100, 101});
    CHECK(r.error().rollback.remaining.empty());
    for (const auto& [id, job] : slurm.jobs) CHECK(job.state == "CANCELLED");
  }
  SECTION("scancel never works: every id remains") {
    slurm.scancel_failures = 1'000;
    auto r = submit_chain(four_stages(), slurm);
    REQUIRE_FALSE(r);
    CHECK(r.error().rollback.remaining == std::vector<JobId>{100, 101});
    CHECK(r.error().error.hint.find("cancelling the jobs already submitted failed too") != std::string::npos);
  }
}

TEST_CASE("chain_jobs: Ctrl-C during submission rolls back") {
  FakeSlurm slurm;
  SubmitHooks hooks;
  bool stop = false;
  hooks.submitted = [&](std::size_t k, JobId) {
    stop = k == 1;
    return Result<void>{};
  };
  hooks.interrupted = [&] { return stop; };
  auto r = submit_chain(four_stages(), slurm, hooks);
  REQUIRE_FALSE(r);
  CHECK(r.error().error.what.find("interrupted") != std::string::npos);
  CHECK(slurm.sbatch_calls.size() == 2);
  CHECK(slurm.cancelled == std::vector<JobId>{100, 101});
}

TEST_CASE("chain_jobs: Ctrl-C during the last sbatch still rolls back") {
  FakeSlurm slurm;
  SubmitHooks hooks;
  bool stop = false;
  hooks.submitted = [&](std::size_t k, JobId) {
    stop = k == 3;
    return Result<void>{};
  };
  hooks.interrupted = [&] { return stop; };
  auto r = submit_chain(four_stages(), slurm, hooks);
  REQUIRE_FALSE(r);
  CHECK(slurm.cancelled.size() == 4);
}

TEST_CASE("chain_jobs: a submitted hook that fails rolls back, its own job included") {
  const auto k = static_cast<std::size_t>(GENERATE(0, 1, 3));
  FakeSlurm slurm;
  SubmitHooks hooks;
  hooks.submitted = [&](std::size_t stage, JobId) -> Result<void> {
    if (stage == k) return fail("cannot write the manifest: No space left on device", "runs/x/manifest.json");
    return {};
  };
  auto r = submit_chain(four_stages(), slurm, hooks);
  REQUIRE_FALSE(r);
  CHECK(r.error().error.what == "cannot write the manifest: No space left on device");
  CHECK(r.error().stage == k);
  CHECK(slurm.sbatch_calls.size() == k + 1);
  CHECK(slurm.cancelled.size() == k + 1);
  CHECK(r.error().rollback.remaining.empty());
}

TEST_CASE("chain_jobs: phases") {
  CHECK(phase_of("COMPLETED") == JobPhase::succeeded);
  CHECK(phase_of("PENDING") == JobPhase::pending);
  CHECK(phase_of("COMPLETING") == JobPhase::running);
  CHECK(phase_of("TIMEOUT") == JobPhase::failed);
  CHECK(phase_of("NODE_FAIL") == JobPhase::failed);
  CHECK(phase_of("CANCELLED") == JobPhase::cancelled);
  CHECK(phase_of("WHATEVER") == JobPhase::unknown);
}

TEST_CASE("chain_jobs: status of a chain that completed") {
  FakeSlurm slurm;
  for (JobId id = 1; id <= 4; ++id) slurm.set(id, "COMPLETED");
  auto s = query_chain(refs({1, 2, 3, 4}), slurm);
  REQUIRE(s);
  CHECK(s->verdict == ChainVerdict::succeeded);
  CHECK(s->to_cancel.empty());
  CHECK(slurm.squeue_calls == 1);
}

TEST_CASE("chain_jobs: status of a running chain") {
  FakeSlurm slurm;
  slurm.set(1, "COMPLETED");
  slurm.set(2, "RUNNING");
  slurm.set(3, "PENDING", "Dependency");
  slurm.set(4, "PENDING", "Dependency");
  auto s = query_chain(refs({1, 2, 3, 4}), slurm);
  REQUIRE(s);
  CHECK(s->verdict == ChainVerdict::running);
  CHECK_FALSE(s->failed_stage);
  CHECK(s->to_cancel.empty());
}

TEST_CASE("chain_jobs: a failed stage blocks its dependents, grandchildren included") {
  // Without kill_invalid_depend: the child says DependencyNeverSatisfied, the grandchild only
  // Dependency. Both are blocked and must be cancelled.
  FakeSlurm slurm;
  slurm.set(1, "COMPLETED");
  slurm.set(2, "FAILED", "NonZeroExitCode", "3");
  slurm.set(3, "PENDING", "DependencyNeverSatisfied");
  slurm.set(4, "PENDING", "Dependency");
  auto s = query_chain(refs({1, 2, 3, 4}), slurm);
  REQUIRE(s);
  CHECK(s->verdict == ChainVerdict::failed);
  REQUIRE(s->failed_stage);
  CHECK(*s->failed_stage == 1);
  CHECK(s->stages[1].exit_code == "3");
  CHECK(s->stages[2].note == "blocked: precompile failed");
  CHECK(s->stages[3].note == "blocked: precompile failed");
  CHECK(s->stages[3].state == "BLOCKED");
  CHECK(s->to_cancel == std::vector<JobId>{3, 4});
}

TEST_CASE("chain_jobs: with kill_invalid_depend the dependents are already cancelled") {
  FakeSlurm slurm;
  slurm.set(1, "FAILED", "NonZeroExitCode", "1");
  slurm.set(2, "CANCELLED", "Dependency");
  auto s = query_chain(refs({1, 2}), slurm);
  REQUIRE(s);
  CHECK(s->verdict == ChainVerdict::failed);
  CHECK(*s->failed_stage == 0);
  CHECK(s->stages[1].note == "blocked: convert failed (cancelled)");
  CHECK(s->to_cancel.empty());
}

TEST_CASE("chain_jobs: DependencyNeverSatisfied with no known failed parent is blocked too") {
  FakeSlurm slurm;
  slurm.set(2, "PENDING", "DependencyNeverSatisfied");
  auto r = refs({1, 2});
  r[0].last_state = "";
  auto s = query_chain(r, slurm);
  REQUIRE(s);
  CHECK(s->to_cancel == std::vector<JobId>{2});
  CHECK(s->verdict == ChainVerdict::failed);
}

TEST_CASE("chain_jobs: forgotten jobs come from sacct, else from the manifest") {
  FakeSlurm slurm;
  slurm.set(2, "RUNNING");
  auto r = refs({1, 2});
  r[0].last_state = "COMPLETED";
  SECTION("no accounting: the manifest's last state") {
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].state == "COMPLETED");
    CHECK(s->stages[0].source == "manifest");
    CHECK(s->verdict == ChainVerdict::running);
  }
  SECTION("accounting wins over an active state recorded") {
    r[0].last_state = "RUNNING";
    slurm.has_accounting = true;
    JobRow row;
    row.id = 1;
    row.state = "FAILED";
    row.exit_code = "2";
    slurm.accounting[1] = row;
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].source == "sacct");
    CHECK(s->verdict == ChainVerdict::failed);
  }
  SECTION("nothing known at all: unknown, not failed") {
    r[0].last_state = "";
    slurm.set(2, "PENDING", "JobHeldUser");
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].state == "UNKNOWN");
    CHECK(s->stages[0].phase == JobPhase::unknown);
    s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->verdict == ChainVerdict::held);
    CHECK(s->unknown_stage == std::size_t{0});
    CHECK(s->to_cancel.empty());
  }
}

TEST_CASE("chain_jobs: a forgotten stage is not a failed one") {
  // No accounting, MinJobAge passed: Slurm forgot convert (id 1). What the stages after it
  // show decides; nothing is cancelled unless a failure is seen.
  FakeSlurm slurm;
  auto r = refs({1, 2, 3, 4});
  slurm.set(3, "PENDING", "Dependency");
  slurm.set(4, "PENDING", "Dependency");
  const auto last_seen = GENERATE(as<std::string>{}, "", "PENDING", "RUNNING");
  r[0].last_state = last_seen;
  SECTION("its dependent pends on resources: it completed") {
    slurm.set(2, "PENDING", "Resources");
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].state == "COMPLETED");
    CHECK(s->stages[0].phase == JobPhase::succeeded);
    CHECK(s->stages[0].source == "inferred");
    CHECK(s->stages[0].note == "forgotten by Slurm; completed: precompile became eligible after it");
    CHECK(s->verdict == ChainVerdict::running);
    CHECK(s->to_cancel.empty());
  }
  SECTION("a later stage started: every stage before it completed") {
    r[1].last_state = "";
    slurm.set(3, "RUNNING");
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].state == "COMPLETED");
    CHECK(s->stages[1].state == "COMPLETED");
    CHECK(s->stages[1].note == "forgotten by Slurm; completed: train started after it");
    CHECK(s->verdict == ChainVerdict::running);
  }
  SECTION("its dependent is held: unknown, exit 3, nothing cancelled") {
    slurm.set(2, "PENDING", "JobHeldUser");
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].state == "UNKNOWN");
    CHECK_FALSE(s->failed_stage);
    CHECK(s->to_cancel.empty());
    CHECK(s->unknown_stage == std::size_t{0});
  }
  SECTION("its dependent still waits on it (or was not evaluated yet): unknown") {
    slurm.set(2, "PENDING", GENERATE("Dependency", "None"));
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->verdict == ChainVerdict::unknown);
    CHECK(may_change(*s));  // the dependent's start will tell
    CHECK(s->to_cancel.empty());
  }
  SECTION("its dependent can never start: it failed, and the dependents are blocked") {
    slurm.set(2, "PENDING", "DependencyNeverSatisfied");
    auto s = query_chain(r, slurm);
    REQUIRE(s);
    CHECK(s->stages[0].state == "FAILED");
    CHECK(s->stages[0].source == "inferred");
    CHECK(s->verdict == ChainVerdict::failed);
    CHECK(s->failed_stage == std::size_t{0});
    CHECK(s->to_cancel == std::vector<JobId>{2, 3, 4});
  }
  SECTION("the last stage forgotten with nothing after it: unknown for good") {
    auto two = refs({1, 2});
    two[0].last_state = "COMPLETED";
    two[1].last_state = last_seen;
    auto s = query_chain(two, slurm);
    REQUIRE(s);
    CHECK(s->verdict == ChainVerdict::unknown);
    CHECK_FALSE(may_change(*s));
  }
}

TEST_CASE("chain_jobs: a held stage is held, and says why") {
  FakeSlurm slurm;
  slurm.set(1, "COMPLETED");
  slurm.set(2, "COMPLETED");
  slurm.set(4, "PENDING", "Dependency");
  const auto [state, reason] = GENERATE(table<std::string, std::string>({
      {"PENDING", "launch failed requeued held"},
      {"PENDING", "JobHoldMaxRequeue"},
      {"PENDING", "JobHeldAdmin"},
      {"REQUEUE_HOLD", "job requeued in held state"},
  }));
  slurm.set(3, state, reason);
  auto s = query_chain(refs({1, 2, 3, 4}), slurm);
  REQUIRE(s);
  CHECK(s->stages[2].phase == JobPhase::held);
  CHECK(s->verdict == ChainVerdict::held);
  CHECK(s->held_stage == std::size_t{2});
  CHECK(s->stages[2].note.starts_with("held (" + reason + "): 'scontrol release 3'"));
  CHECK_FALSE(may_change(*s));
  CHECK(s->to_cancel.empty());
  CHECK(is_active(phase_of(slurm.jobs[3])));  // still queued: cancel must wait for it
}

TEST_CASE("chain_jobs: a recorded terminal state is not asked again") {
  FakeSlurm slurm;
  slurm.set(3, "RUNNING");
  auto r = refs({1, 2, 3, 4});
  r[0].last_state = "COMPLETED";
  r[0].last_elapsed = "0:42";
  r[1].last_state = "COMPLETED";
  r[3].last_state = "PENDING";
  CHECK(ids_to_ask(r) == std::vector<JobId>{3, 4});
  slurm.set(4, "PENDING", "Dependency");
  auto s = query_chain(r, slurm);
  REQUIRE(s);
  CHECK(slurm.asked == std::vector<JobId>{3, 4});
  CHECK(s->stages[0].source == "manifest");
  CHECK(s->stages[0].elapsed == "0:42");
  CHECK(s->stages[0].note.empty());
  CHECK(s->verdict == ChainVerdict::running);
  for (auto& x : r) x.last_state = "COMPLETED";
  slurm.squeue_calls = 0;
  s = query_chain(r, slurm);
  REQUIRE(s);
  CHECK(slurm.squeue_calls == 0);
  CHECK(s->verdict == ChainVerdict::succeeded);
}

TEST_CASE("chain_jobs: several chains, one squeue call") {
  FakeSlurm slurm;
  for (JobId id = 1; id <= 8; ++id) slurm.set(id, id == 8 ? "RUNNING" : "COMPLETED");
  auto all = query_chains({refs({1, 2, 3, 4}), refs({5, 6, 7, 8})}, slurm);
  REQUIRE(all);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].verdict == ChainVerdict::succeeded);
  CHECK((*all)[1].verdict == ChainVerdict::running);
  CHECK(slurm.squeue_calls == 1);
}

TEST_CASE("chain_jobs: a chain found from Slurm alone") {
  FakeSlurm slurm;
  auto spec = four_stages();
  REQUIRE(submit_chain(spec, slurm));
  auto other = four_stages();
  other.chain_id = "20261122-010203-00000001";
  REQUIRE(submit_chain(other, slurm));
  auto found = find_chain_in_slurm(spec.chain_id, slurm);
  REQUIRE(found);
  REQUIRE(found->size() == 4);
  CHECK((*found)[0].job_id == JobId{100});
  CHECK((*found)[3].name == "convert_back");
  CHECK((*found)[3].job_id == JobId{103});
  CHECK_FALSE(find_chain_in_slurm("20991231-000000-deadbeef", slurm));
}

TEST_CASE("chain_jobs: cancel_jobs of nothing does nothing") {
  FakeSlurm slurm;
  auto r = cancel_jobs({}, slurm, [](std::chrono::milliseconds) {});
  REQUIRE(r);
  CHECK(r->cancelled.empty());
  CHECK(slurm.squeue_calls == 0);
}

TEST_CASE("chain_jobs: the worst verdict of chains whose verdicts mix") {
  const auto of = [](std::initializer_list<ChainVerdict> vs) {
    std::vector<ChainStatus> out;
    for (auto v : vs) {
      ChainStatus s;
      s.verdict = v;
      out.push_back(s);
    }
    return worst_verdict(out);
  };
  using enum ChainVerdict;
  CHECK(of({}) == succeeded);
  CHECK(of({succeeded, succeeded}) == succeeded);
  CHECK(of({succeeded, running}) == running);
  CHECK(of({running, unknown, succeeded}) == unknown);
  CHECK(of({unknown, held, running}) == held);
  CHECK(of({held, failed, succeeded}) == failed);
  CHECK(of({failed, held, unknown, running, succeeded}) == failed);
  CHECK(of({succeeded, held}) == held);
}
