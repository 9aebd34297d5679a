#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "chain/fake_slurm.hpp"
#include "fixtures.hpp"
#include "trnslurm/chain/requeue.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;
using Kind = PreflightOutcome::Kind;

namespace {

health::NodeRow row(std::string node, health::Status status, std::string why = {}) {
  return {std::move(node), status, std::move(why), {}};
}

const std::vector<health::NodeRow> n1_fails = {row("n1", health::Status::fail, "errors: neuron device 5"),
                                               row("n2", health::Status::ok)};

// A run directory with logs/ (the job's output creates it) and the job's pre-flight settings;
// counts the pauses and the calls made just before the requeue.
struct Job {
  test::ScratchDir run;
  PreflightJob pf;
  int pauses = 0;
  int before_requeue = 0;
  std::vector<JobId> requeued_when_called;  // what Slurm had requeued when before_requeue ran
  FakeSlurm slurm;

  Job() {
    std::filesystem::create_directories(run / "logs");
    pf.run_dir = run.path();
    pf.job = 7;
    pf.restart = 1;
    pf.time = 1700000000;
    pf.max_exclusions = 2;
    pf.site_drain = true;
    pf.pause = [this](std::chrono::milliseconds d) {
      CHECK(d == std::chrono::milliseconds(100));
      ++pauses;
    };
    pf.before_requeue = [this](const PreflightOutcome& so_far) {
      CHECK(so_far.kind == Kind::requeued);
      CHECK(so_far.event.event == "exclude");
      requeued_when_called = slurm.requeued;
      ++before_requeue;
    };
    slurm.job_records[7] = "JobId=7 JobName=trn-x-train ExcNodeList=(null) NodeList=n1,n2\n";
  }
  Result<PreflightOutcome> settle(const std::vector<health::NodeRow>& rows = n1_fails) {
    return settle_preflight(rows, pf, slurm);
  }
  void log_exclusion(std::string node, JobId job = 7) {
    RestartEvent e;
    e.event = "exclude";
    e.cause = "preflight";
    e.job = job;
    e.nodes = {std::move(node)};
    REQUIRE(append_restart(run.path(), e));
  }
};

}  // namespace

TEST_CASE("requeue: every node passing records nothing and asks Slurm nothing") {
  Job j;
  const auto r =
      j.settle({row("n1", health::Status::ok), row("n2", health::Status::warn, "disk: 80 % full")});
  REQUIRE(r);
  CHECK(r->kind == Kind::passed);
  CHECK(r->nodes_checked == 2);
  CHECK(read_restarts(j.run.path()).empty());
  CHECK(j.slurm.requeued.empty());
  CHECK(j.slurm.exclusions.empty());
  CHECK(j.before_requeue == 0);
}

TEST_CASE("requeue: a failed node is recorded, the job requeued and the node excluded") {
  Job j;
  j.slurm.node_records["n1"] = "NodeName=n1 State=IDLE+DRAIN Reason=trnslurm: pre-flight failed\n";
  const auto r = j.settle();
  REQUIRE(r);
  CHECK(r->kind == Kind::requeued);
  CHECK(r->excluded == "n1");
  CHECK(r->excluded_set);
  CHECK(r->own_exclusions_unknown.empty());
  CHECK(j.slurm.requeued == std::vector<JobId>{7});
  CHECK(j.slurm.exclusions == std::vector<std::string>{"n1"});
  CHECK(j.pauses == 0);
  // Called once, before the requeue (the job's SIGTERM comes with it).
  CHECK(j.before_requeue == 1);
  CHECK(j.requeued_when_called.empty());
  const auto log = read_restarts(j.run.path());
  REQUIRE(log.size() == 1);
  CHECK(log[0].event == "exclude");
  CHECK(log[0].cause == "preflight");
  CHECK(log[0].job == 7);
  CHECK(log[0].restart == 1);
  CHECK(log[0].time == 1700000000);
  CHECK(log[0].nodes == std::vector<std::string>{"n1"});
  CHECK(log[0].why == "n1: errors: neuron device 5");
  CHECK(log[0].drain == "drained n1");
  CHECK(r->event.drain == log[0].drain);
}

TEST_CASE("requeue: the excluded nodes keep the job's own and the log's earlier ones") {
  Job j;
  j.pf.max_exclusions = 5;
  j.log_exclusion("n5");
  j.log_exclusion("n6", 99);  // another job's: not this one's to exclude
  SECTION("scontrol shows the job's own list") {
    j.slurm.job_records[7] = "JobId=7 ExcNodeList=n[8-9] NodeList=n1,n2\n";
    const auto r = j.settle();
    REQUIRE(r);
    CHECK(r->excluded == "n[8-9],n5,n1");
    CHECK(r->own_exclusions_unknown.empty());
    CHECK(j.slurm.exclusions == std::vector<std::string>{"n[8-9],n5,n1"});
  }
  SECTION("scontrol cannot show the job: the log's and this pre-flight's, said so") {
    j.slurm.show_job_error = "slurm_load_jobs error: Unable to contact slurm controller";
    const auto r = j.settle();
    REQUIRE(r);
    CHECK(r->kind == Kind::requeued);
    CHECK(r->excluded == "n5,n1");
    CHECK(r->own_exclusions_unknown.find("Unable to contact slurm controller") != std::string::npos);
    CHECK(j.slurm.requeued == std::vector<JobId>{7});
  }
}

TEST_CASE("requeue: the excluded nodes are asked for again until the job pends") {
  Job j;
  j.slurm.exclude_refusals = 3;  // "Job is no longer pending execution" while it ends
  const auto r = j.settle();
  REQUIRE(r);
  CHECK(r->excluded_set);
  CHECK(j.pauses == 3);
  CHECK(j.slurm.exclusions == std::vector<std::string>{"n1"});
}

TEST_CASE("requeue: excluded nodes Slurm never takes leave the job requeued, and say so") {
  Job j;
  j.slurm.exclude_refusals = 1000;
  j.pf.exclude_attempts = 5;
  const auto r = j.settle();
  REQUIRE(r);
  CHECK(r->kind == Kind::requeued);
  CHECK_FALSE(r->excluded_set);
  CHECK(r->excluded == "n1");
  CHECK(j.pauses == 5);
  CHECK(j.slurm.requeued == std::vector<JobId>{7});
  CHECK(j.slurm.exclusions.empty());
}

TEST_CASE("requeue: a requeue scontrol refuses is an error, and the exclusion stays recorded") {
  Job j;
  j.slurm.requeue_error = "scontrol: error: Requested operation is presently disabled";
  const auto r = j.settle();
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "scontrol requeue of job 7 failed");
  CHECK(r.error().hint == j.slurm.requeue_error);
  CHECK(j.slurm.exclusions.empty());
  CHECK(j.pauses == 0);
  // The wrapper then fails the job; the log says which node made it.
  const auto log = read_restarts(j.run.path());
  REQUIRE(log.size() == 1);
  CHECK(log[0].event == "exclude");
}

TEST_CASE("requeue: a job Slurm no longer knows is neither recorded nor requeued") {
  Job j;
  j.slurm.job_records.clear();
  const auto r = j.settle();
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "job 7 is gone: Slurm no longer knows it");
  CHECK(j.slurm.requeued.empty());
  CHECK(j.slurm.exclusions.empty());
  CHECK(j.before_requeue == 0);
  CHECK(read_restarts(j.run.path()).empty());
}

TEST_CASE("requeue: past max_exclusions the job gives up: recorded, never requeued") {
  Job j;
  j.pf.max_exclusions = 2;
  j.pf.recipe_drain = false;
  j.log_exclusion("n5");
  j.log_exclusion("n6");
  const auto r = j.settle();
  REQUIRE(r);
  CHECK(r->kind == Kind::gave_up);
  CHECK(r->event.max_exclusions == 2u);
  CHECK(j.slurm.requeued.empty());
  CHECK(j.slurm.exclusions.empty());
  CHECK(j.before_requeue == 0);
  const auto log = read_restarts(j.run.path());
  REQUIRE(log.size() == 3);
  CHECK(log[2].event == "gave-up");
  CHECK(log[2].nodes == std::vector<std::string>{"n1"});
  CHECK(log[2].drain == "not drained: the recipe sets preflight_drain = false");
}

TEST_CASE("requeue: one exclusion short of max_exclusions still requeues") {
  Job j;
  j.pf.max_exclusions = 2;
  j.log_exclusion("n5");
  const auto r = j.settle();
  REQUIRE(r);
  CHECK(r->kind == Kind::requeued);
  CHECK(j.slurm.requeued == std::vector<JobId>{7});
}

TEST_CASE("requeue: a restarts log that cannot be written fails before any requeue") {
  Job j;
  std::filesystem::remove_all(j.run / "logs");  // the log counts exclusions: without it, no requeue
  const auto r = j.settle();
  REQUIRE_FALSE(r);
  CHECK_FALSE(r.error().what.empty());
  CHECK(j.slurm.requeued.empty());
  CHECK(j.before_requeue == 0);
}

TEST_CASE("requeue: the failed nodes Slurm shows drained by trnslurm") {
  FakeSlurm slurm;
  slurm.node_records["n1"] = "NodeName=n1 State=IDLE+DRAIN Reason=trnslurm: pre-flight failed\n";
  slurm.node_records["n2"] = "NodeName=n2 State=IDLE+DRAIN Reason=maintenance\n";
  slurm.node_records["n3"] = "NodeName=n3 State=IDLE Reason=(null)\n";
  // n4: scontrol cannot show it
  CHECK(drained_nodes({"n1", "n2", "n3", "n4"}, slurm) == std::vector<std::string>{"n1"});
}
