#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "fake_slurm.hpp"
#include "fixtures.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/chain_status.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/chain/stage_outcome.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;
using trnslurm::test::FakeSlurm;

namespace {

OutcomeRecord record(std::string stage, JobId job, std::uint32_t attempt, std::string state,
                     std::optional<int> exit = std::nullopt, std::int64_t end = 2000) {
  OutcomeRecord r;
  r.stage = std::move(stage);
  r.job = job;
  r.attempt = attempt;
  r.state = std::move(state);
  r.exit = exit;
  r.start = 1000;
  if (r.state != "running") r.end = end;
  r.host = "n1";
  return r;
}

// Two stages, convert (job 1) and train (job 2), each with the records given.
std::vector<StageRef> two_stages(std::vector<OutcomeRecord> convert, std::vector<OutcomeRecord> train) {
  std::vector<StageRef> out(2);
  out[0].name = "convert";
  out[0].job_id = 1;
  out[0].outcomes = std::move(convert);
  out[1].name = "train";
  out[1].job_id = 2;
  out[1].outcomes = std::move(train);
  return out;
}

void write(const std::filesystem::path& p, std::string_view text) {
  std::ofstream(p) << text;
}

// Runs a rendered job script with bash as a Slurm job `job` (attempt `attempt`) would: its exit status.
// No controller: Slurm's commands, given an empty slurm.conf, fail at once (a missing one makes
// each retry for 60 s).
int run_script(const std::filesystem::path& dir, const std::string& script, JobId job, int attempt = 0) {
  const auto path = dir / "job.sh";
  write(path, script);
  const auto cmd = fmt::format(
      "cd '{}' && env SLURM_JOB_ID={} SLURM_RESTART_COUNT={} SLURMD_NODENAME=n7 "
      "SLURM_CONF=/dev/null bash job.sh >/dev/null 2>&1",
      dir.string(), job, attempt);
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("stage_outcome: a record is parsed strictly") {
  const auto r = parse_outcome(
      R"({"stage":"train","job":42,"attempt":1,"state":"failed","exit":3,"signal":null,"cause":"max-restarts","start":100,"end":160,"host":"n2"})");
  REQUIRE(r);
  CHECK(r->stage == "train");
  CHECK(r->job == 42);
  CHECK(r->attempt == 1);
  CHECK(r->state == "failed");
  CHECK(r->exit == 3);
  CHECK(r->signal.empty());
  CHECK(r->cause == "max-restarts");
  CHECK(r->end == 160);
  CHECK(r->host == "n2");
  const auto running = parse_outcome(
      R"({"stage":"convert","job":7,"attempt":0,"state":"running","exit":null,"signal":null,"cause":"","start":5,"end":null,"host":""})");
  REQUIRE(running);
  CHECK_FALSE(running->end);
  CHECK_FALSE(running->exit);
  // Not records: torn, an unknown state, an ended attempt without its exit status, no job.
  CHECK_FALSE(parse_outcome(R"({"stage":"train","job":42,"attempt":0,"state":"fai)"));
  CHECK_FALSE(parse_outcome(R"({"stage":"train","job":42,"attempt":0,"state":"great","exit":0,"start":1})"));
  CHECK_FALSE(parse_outcome(R"({"stage":"train","job":42,"attempt":0,"state":"completed","start":1})"));
  CHECK_FALSE(parse_outcome(R"({"stage":"train","attempt":0,"state":"completed","exit":0,"start":1})"));
  CHECK_FALSE(
      parse_outcome(R"({"stage":"train","job":-4,"attempt":0,"state":"completed","exit":0,"start":1})"));
  CHECK_FALSE(parse_outcome("[]"));
  // Words only where words go: a terminal escape in a host name is not printed by status.
  CHECK_FALSE(parse_outcome(
      R"({"stage":"train","job":42,"attempt":0,"state":"completed","exit":0,"start":1,"host":"n1[2J"})"));
}

TEST_CASE("stage_outcome: the records of a run directory, temporary and foreign files skipped") {
  test::ScratchDir run;
  CHECK(read_outcomes(run.path()).empty());  // no outcomes directory: nothing, no error
  std::filesystem::create_directory(outcomes_dir(run.path()));
  const auto dir = outcomes_dir(run.path());
  write(
      dir / "train.5.0.json",
      R"({"stage":"train","job":5,"attempt":0,"state":"completed","exit":0,"start":1,"end":2,"host":"n1"})");
  // A write in progress (tmp + mv): not read.
  write(dir / "train.5.1.json.tmp.123",
        R"({"stage":"train","job":5,"attempt":1,"state":"failed","exit":1,"start":1,"end":2,"host":"n1"})");
  write(dir / "convert.4.0.json", "not json");
  write(dir / "big.json",
        std::string(10000, ' ') + R"({"stage":"x","job":1,"attempt":0,"state":"running","start":1})");
  std::filesystem::create_directory(dir / "sub.json");
  const auto records = read_outcomes(run.path());
  REQUIRE(records.size() == 1);
  CHECK(records[0].job == 5);
  CHECK(records[0].state == "completed");
}

TEST_CASE("stage_outcome: the highest attempt of the stage's own job decides, never the time") {
  std::vector<OutcomeRecord> records{
      record("train", 2, 0, "completed", 0, 9000),
      record("train", 2, 1, "failed", 1, 5000),  // ended "earlier": clocks differ
      record("train", 3, 4, "completed", 0), record("convert", 2, 7, "completed", 0)};
  const auto* r = deciding_record(records, "train", 2);
  REQUIRE(r != nullptr);
  CHECK(r->attempt == 1);
  CHECK(r->state == "failed");
  CHECK(deciding_record(records, "train", 9) == nullptr);
  CHECK(deciding_record(records, "precompile", 2) == nullptr);
}

TEST_CASE("stage_outcome: squeue's elapsed format") {
  CHECK(slurm_elapsed(0) == "0:00");
  CHECK(slurm_elapsed(75) == "1:15");
  CHECK(slurm_elapsed(3600 + 62) == "1:01:02");
  CHECK(slurm_elapsed(2 * 86400 + 3 * 3600 + 4 * 60 + 5) == "2-03:04:05");
  CHECK(slurm_elapsed(-5) == "0:00");
}

TEST_CASE("stage_outcome: a job Slurm forgot is read from its own record") {
  SECTION("recorded success: COMPLETED, the chain succeeded") {
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 2, 0, "completed", 0, 1075)}),
        {}, std::nullopt);
    CHECK(s.verdict == ChainVerdict::succeeded);
    CHECK(s.stages[1].state == "COMPLETED");
    CHECK(s.stages[1].source == "record");
    CHECK(s.stages[1].exit_code == "0");
    CHECK(s.stages[1].elapsed == "1:15");
    CHECK(s.stages[1].note == "forgotten by Slurm; the job recorded exit 0 on n1");
  }
  SECTION("recorded failure: FAILED with its exit code") {
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 2, 0, "failed", 3)}), {},
        std::nullopt);
    CHECK(s.verdict == ChainVerdict::failed);
    CHECK(s.failed_stage == std::size_t{1});
    CHECK(s.stages[1].state == "FAILED");
    CHECK(s.stages[1].exit_code == "3");
    CHECK(s.stages[1].note == "forgotten by Slurm; the job recorded exit 3 on n1");
  }
  SECTION("a stage behind a recorded failure, forgotten with no record, never started") {
    auto refs = two_stages({record("convert", 1, 0, "failed", 2)}, {});
    const auto s = evaluate_chain(refs, {}, std::nullopt);
    CHECK(s.verdict == ChainVerdict::failed);
    CHECK(s.failed_stage == std::size_t{0});
    CHECK(s.stages[1].state == "CANCELLED");
    CHECK(s.stages[1].note == "blocked: convert failed (never started)");
    CHECK(s.to_cancel.empty());
  }
  SECTION("a signal recorded: FAILED, and which signal") {
    auto sig = record("train", 2, 2, "signalled", 143);
    sig.signal = "TERM";
    const auto s =
        evaluate_chain(two_stages({record("convert", 1, 0, "completed", 0)}, {sig}), {}, std::nullopt);
    CHECK(s.verdict == ChainVerdict::failed);
    CHECK(s.stages[1].exit_code == "143");
    CHECK(s.stages[1].note ==
          "forgotten by Slurm; restart 2 recorded SIGTERM on n1 (scancel, the time limit or a preemption)");
  }
  SECTION("killed before it could record: unknown, never a failure") {
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 2, 0, "running")}), {},
        std::nullopt);
    CHECK(s.verdict == ChainVerdict::unknown);
    CHECK(s.unknown_stage == std::size_t{1});
    CHECK_FALSE(s.failed_stage);
    CHECK(s.stages[1].state == "UNKNOWN");
    CHECK(s.stages[1].source == "record");
    CHECK(s.stages[1].host == "n1");
    CHECK(s.stages[1].note ==
          "forgotten by Slurm; the job started on n1 at 1970-01-01 00:16:40 UTC and never "
          "recorded its end (killed: a node lost, SIGKILL)");
  }
  SECTION("the last attempt requeued itself and no later one recorded: unknown") {
    auto rq = record("train", 2, 1, "requeued", 0);
    rq.cause = "time-limit";
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 2, 0, "requeued", 0), rq}), {},
        std::nullopt);
    CHECK(s.verdict == ChainVerdict::unknown);
    CHECK(
        s.stages[1].note ==
        "forgotten by Slurm; restart 1 requeued itself (time-limit), and no later attempt recorded anything");
  }
  SECTION("a later attempt's record wins over an earlier one's, whatever their times") {
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)},
                   {record("train", 2, 0, "running"), record("train", 2, 1, "completed", 0, 1500),
                    record("train", 2, 0, "failed", 1, 9999)}),
        {}, std::nullopt);
    CHECK(s.verdict == ChainVerdict::succeeded);
    CHECK(s.stages[1].note == "forgotten by Slurm; restart 1 recorded exit 0 on n1");
  }
  SECTION("a record of another job of the stage says nothing of this one") {
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 77, 0, "completed", 0)}), {},
        std::nullopt);
    CHECK(s.stages[1].state == "UNKNOWN");
    CHECK(s.stages[1].source.empty());
    CHECK(s.verdict == ChainVerdict::unknown);
  }
  SECTION("a stage with no record and a later one recorded running: inferred from the later one") {
    const auto s = evaluate_chain(two_stages({}, {record("train", 2, 0, "running")}), {}, std::nullopt);
    // train started, so convert completed (afterok); how train ended is not known.
    CHECK(s.stages[0].state == "COMPLETED");
    CHECK(s.stages[0].note == "forgotten by Slurm; completed: train started after it");
    CHECK(s.verdict == ChainVerdict::unknown);
  }
}

TEST_CASE("stage_outcome: Slurm's view wins while it has one") {
  std::vector<JobRow> live;
  const auto row = [](JobId id, std::string state, std::string exit = "0") {
    JobRow r;
    r.id = id;
    r.state = std::move(state);
    r.exit_code = std::move(exit);
    return r;
  };
  SECTION("a requeued attempt runs: the older attempt's failure is not the stage's") {
    live = {row(1, "COMPLETED"), row(2, "RUNNING")};
    const auto s =
        evaluate_chain(two_stages({record("convert", 1, 0, "completed", 0)},
                                  {record("train", 2, 0, "requeued", 0), record("train", 2, 1, "failed", 1)}),
                       live, std::nullopt);
    CHECK(s.stages[1].state == "RUNNING");
    CHECK(s.stages[1].source == "squeue");
    CHECK(s.verdict == ChainVerdict::running);
  }
  SECTION("squeue says COMPLETED, a record says failed: COMPLETED") {
    live = {row(1, "COMPLETED"), row(2, "COMPLETED")};
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "failed", 2)}, {record("train", 2, 0, "failed", 1)}), live,
        std::nullopt);
    CHECK(s.verdict == ChainVerdict::succeeded);
    CHECK(s.stages[0].source == "squeue");
  }
  SECTION("sacct says FAILED, the record says completed: FAILED") {
    const std::vector<JobRow> accounted{row(1, "COMPLETED"), row(2, "FAILED", "9")};
    const auto s = evaluate_chain(
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 2, 0, "completed", 0)}), {},
        accounted);
    CHECK(s.verdict == ChainVerdict::failed);
    CHECK(s.stages[1].source == "sacct");
    CHECK(s.stages[1].exit_code == "9");
  }
  SECTION("what an earlier status saw ended wins over the record") {
    auto refs =
        two_stages({record("convert", 1, 0, "completed", 0)}, {record("train", 2, 0, "completed", 0)});
    refs[1].last_state = "CANCELLED";
    const auto s = evaluate_chain(refs, {}, std::nullopt);
    CHECK(s.stages[1].state == "CANCELLED");
    CHECK(s.stages[1].source == "manifest");
    CHECK(s.verdict == ChainVerdict::failed);
  }
}

TEST_CASE("stage_outcome: status reads the records of the run directory, and gathers evidence") {
  test::ScratchDir runs;
  FakeSlurm slurm;  // no accounting; every job forgotten
  Manifest m;
  m.chain_id = "20261122-010203-000-0000abcd";
  m.state = ManifestState::submitted;
  m.run_dir = create_run_dir(runs.path(), m.chain_id).value();
  m.checkpoint_dir = (runs / "ckpt").string();
  m.export_dir = (runs / "export").string();
  for (JobId id : {JobId{1}, JobId{2}}) {
    StageRecord r;
    r.name = id == 1 ? "convert" : "train";
    r.job_id = id;
    r.last_state = "RUNNING";
    m.stages.push_back(std::move(r));
  }
  REQUIRE(write_manifest(m));
  REQUIRE(std::filesystem::is_directory(outcomes_dir(m.run_dir)));  // created with the run directory
  const auto put = [&](std::string_view name, std::string_view text) {
    REQUIRE(write_file_atomic(outcomes_dir(m.run_dir) / name, text));
  };
  put("convert.1.0.json",
      R"({"stage":"convert","job":1,"attempt":0,"state":"completed","exit":0,"signal":null,"cause":"","start":1,"end":2,"host":"n1"})");
  put("train.2.0.json",
      R"({"stage":"train","job":2,"attempt":0,"state":"running","exit":null,"signal":null,"cause":"","start":1,"end":null,"host":"n2"})");
  std::filesystem::create_directories(runs / "ckpt" / "step_20");
  write(runs / "ckpt" / "step_20" / "done", "");
  std::filesystem::create_directories(runs / "ckpt" / "step_30");  // not done: not counted
  write(output_path(m.run_dir, "train", 2), "step 1\nstep 25 loss 3.1\n\n");
  auto chain = load_chain(runs.path(), "", slurm);
  REQUIRE(chain);
  auto s = refresh_status(*chain, slurm);
  REQUIRE(s);
  CHECK(s->stages[0].state == "COMPLETED");
  CHECK(s->verdict == ChainVerdict::unknown);
  REQUIRE(s->evidence);
  const auto& e = *s->evidence;
  CHECK(e.stage == "train");
  CHECK(e.checkpoint_step == 20u);
  CHECK_FALSE(e.export_entries);  // no export directory
  CHECK(e.last_log_line == "step 25 loss 3.1");
  REQUIRE(e.to_run.size() == 3);
  CHECK(e.to_run[0].starts_with("sinfo -R -n n2"));
  CHECK(e.to_run[1] == "trnslurm logs " + m.chain_id + " --stage train");
  CHECK(e.to_run[2].starts_with("trnslurm submit --resume-from " + m.chain_id));

  // A FIFO in the log's place is neither waited on nor read: no last line, the rest as before.
  const auto log = output_path(m.run_dir, "train", 2);
  std::filesystem::remove(log);
  REQUIRE(::mkfifo(log.c_str(), 0600) == 0);
  s = refresh_status(*chain, slurm);
  REQUIRE(s);
  REQUIRE(s->evidence);
  CHECK(s->evidence->last_log_line.empty());
  CHECK(s->evidence->checkpoint_step == 20u);
  std::filesystem::remove(log);

  // The job ends after all and records it: the next status says so, with no evidence needed.
  put("train.2.0.json",
      R"({"stage":"train","job":2,"attempt":0,"state":"failed","exit":4,"signal":null,"cause":"","start":1,"end":2,"host":"n2"})");
  s = refresh_status(*chain, slurm);
  REQUIRE(s);
  CHECK(s->verdict == ChainVerdict::failed);
  CHECK(s->stages[1].exit_code == "4");
  CHECK_FALSE(s->evidence);
}

TEST_CASE("stage_outcome: every rendered job script records how it ended") {
  test::ScratchDir run;
  ScriptInput in;
  in.chain_id = "c";
  in.stage = "convert";
  in.run_dir = run.path();
  const auto run_and_read = [&](const std::string& command, int attempt = 0) {
    in.command = command;
    auto script = render_job_script(in);
    REQUIRE(script);
    const int rc = run_script(run.path(), *script, 31, attempt);
    auto records = read_outcomes(run.path());
    const auto* r = deciding_record(records, in.stage, 31);
    REQUIRE(r != nullptr);
    CHECK(r->host == "n7");
    CHECK(r->attempt == static_cast<std::uint32_t>(attempt));
    if (r->end) CHECK(*r->end >= r->start);
    return std::pair{rc, *r};
  };
  SECTION("success") {
    const auto [rc, r] = run_and_read("true\n");
    CHECK(rc == 0);
    CHECK(r.state == "completed");
    CHECK(r.exit == 0);
  }
  SECTION("a failing command under set -e: its status, unchanged by the record") {
    const auto [rc, r] = run_and_read("false\necho never\n");
    CHECK(rc == 1);
    CHECK(r.state == "failed");
    CHECK(r.exit == 1);
  }
  SECTION("exit N") {
    const auto [rc, r] = run_and_read("exit 7\n");
    CHECK(rc == 7);
    CHECK(r.exit == 7);
  }
  SECTION("SIGTERM to the batch shell") {
    const auto [rc, r] = run_and_read("kill -TERM $$\nsleep 0.1\n");
    CHECK(rc == 143);
    CHECK(r.state == "signalled");
    CHECK(r.signal == "TERM");
  }
  SECTION("SIGKILL: the record of the attempt stays 'running'") {
    const auto [rc, r] = run_and_read("kill -KILL $$\n");
    CHECK(rc != 0);
    CHECK(r.state == "running");
    CHECK_FALSE(r.end);
  }
  SECTION("the train wrapper records its command's status, per attempt") {
    in.stage = "train";
    in.resilience = Resilience{2, 0};
    auto [rc, r] = run_and_read("exit 5\n", 1);
    CHECK(rc == 5);
    CHECK(r.state == "failed");
    CHECK(r.exit == 5);
    std::tie(rc, r) = run_and_read("true\n", 2);
    CHECK(rc == 0);
    CHECK(r.state == "completed");
    CHECK(r.attempt == 2);
    // The wrapper gives up past max_restarts before the command runs: recorded as failed.
    std::tie(rc, r) = run_and_read("true\n", 3);
    CHECK(rc == 1);
    CHECK(r.state == "failed");
    CHECK(r.cause == "max-restarts");
    CHECK(read_outcomes(run.path()).size() == 3);  // one file per attempt
  }
  // No temporary file is left behind.
  for (const auto& f : std::filesystem::directory_iterator(outcomes_dir(run.path())))
    CHECK(f.path().extension() == ".json");
}
