#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures.hpp"
#include "trnslurm/chain/run_dir.hpp"

using namespace trnslurm;
namespace fs = std::filesystem;

namespace {
StageRecord record(std::string name, std::vector<std::string> argv = {}) {
  StageRecord r;
  r.name = std::move(name);
  r.sbatch_argv = std::move(argv);
  return r;
}
}  // namespace

TEST_CASE("run_dir: manifest round trip") {
  Manifest m;
  m.chain_id = "20261122-010203-0000abcd";
  m.created = "2026-11-22T01:02:03Z";
  m.state = ManifestState::submitted;
  m.run_dir = "/runs/20261122-010203-0000abcd";
  m.stages.push_back(record("convert", {"sbatch", "--parsable"}));
  m.stages[0].job_id = 7;
  m.stages[0].last_state = "COMPLETED";
  m.stages[0].last_exit_code = "0";
  m.stages[0].last_reason = "None";
  m.stages[0].last_elapsed = "1:02";
  m.stages[0].last_nodes = "2";
  m.stages.push_back(record("train"));
  auto back = manifest_from_json(manifest_to_json(m), "m.json");
  REQUIRE(back);
  CHECK(back->chain_id == m.chain_id);
  CHECK(back->state == ManifestState::submitted);
  REQUIRE(back->stages.size() == 2);
  CHECK(back->stages[0].job_id == JobId{7});
  CHECK(back->stages[0].sbatch_argv == m.stages[0].sbatch_argv);
  CHECK(back->stages[0].last_state == "COMPLETED");
  CHECK_FALSE(back->stages[1].job_id);
  auto refs = stage_refs(*back);
  CHECK(refs[0].last_exit_code == "0");
  CHECK(refs[0].last_reason == "None");
  CHECK(refs[0].last_elapsed == "1:02");
  CHECK(refs[0].last_nodes == "2");
}

TEST_CASE("run_dir: a damaged manifest is an error naming the file") {
  auto r = manifest_from_json("{\"chain_id\": 3}", "runs/x/manifest.json");
  REQUIRE_FALSE(r);
  CHECK(r.error().where == "runs/x/manifest.json");
  CHECK_FALSE(manifest_from_json("not json", "m"));
  CHECK_FALSE(manifest_from_json(R"({"chain_id":"../x","run_dir":"/","stages":[]})", "m"));
}

TEST_CASE("run_dir: run directories are created once, listed in order, newest found") {
  const test::ScratchDir t;
  const auto runs = t / "runs";
  auto a = create_run_dir(runs, "20261122-010203-00000001");
  REQUIRE(a);
  CHECK(fs::is_directory(*a / "logs"));
  CHECK_FALSE(create_run_dir(runs, "20261122-010203-00000001"));
  auto b = create_run_dir(runs, "20261122-010204-00000000");
  REQUIRE(b);
  CHECK_FALSE(find_run_dir(runs, ""));  // no manifest yet
  for (const auto& dir : {*a, *b}) {
    Manifest m;
    m.chain_id = dir.filename().string();
    m.run_dir = dir;
    REQUIRE(write_manifest(m));
  }
  const auto dirs = list_run_dirs(runs);
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0].filename() == "20261122-010203-00000001");
  CHECK(find_run_dir(runs, "")->filename() == "20261122-010204-00000000");
  CHECK(find_run_dir(runs, "20261122-010203-00000001")->filename() == "20261122-010203-00000001");
  CHECK_FALSE(find_run_dir(runs, "20991122-010203-00000001"));
  CHECK_FALSE(find_run_dir(runs, "../../etc"));
  auto m = read_manifest(*a);
  REQUIRE(m);
  CHECK(m->chain_id == "20261122-010203-00000001");
}

TEST_CASE("run_dir: the journal records ids and states on top of the manifest") {
  const test::ScratchDir t;
  auto dir = create_run_dir(t / "runs", "20261122-010203-000-00000001");
  REQUIRE(dir);
  Manifest m;
  m.chain_id = "20261122-010203-000-00000001";
  m.run_dir = *dir;
  m.state = ManifestState::submitting;
  m.stages.push_back(record("convert", {"sbatch", "c.sh"}));
  m.stages.push_back(record("train", {"sbatch", "--dependency=afterok:0", "t.sh"}));
  REQUIRE(write_manifest(m));
  REQUIRE(record_job(*dir, "convert", 41));
  auto mid = read_manifest(*dir);
  REQUIRE(mid);
  CHECK(mid->state == ManifestState::submitting);
  CHECK(mid->stages[0].job_id == JobId{41});
  CHECK_FALSE(mid->stages[1].job_id);
  CHECK(mid->stages[1].sbatch_argv[1] == "--dependency=afterok:41");
  REQUIRE(record_job(*dir, "train", 42));
  REQUIRE(record_state(*dir, ManifestState::submitted));
  auto done = read_manifest(*dir);
  REQUIRE(done);
  CHECK(done->state == ManifestState::submitted);
  CHECK(done->stages[1].job_id == JobId{42});
}

TEST_CASE("run_dir: a torn or foreign journal line is skipped") {
  Manifest m;
  m.stages.push_back(record("convert"));
  apply_journal(m, "job convert 7\nstate submitted\njob convert x\nnonsense\njob convert 9");
  CHECK(m.stages[0].job_id == JobId{7});
  CHECK(m.state == ManifestState::submitted);
  apply_journal(m, "job nosuchstage 5\njob convert 0\n");
  CHECK(m.stages[0].job_id == JobId{7});
}

TEST_CASE("run_dir: manifest states round-trip by name - an unknown one is refused") {
  for (const auto s : {ManifestState::dry_run, ManifestState::submitting, ManifestState::submitted,
                       ManifestState::rolled_back, ManifestState::cancelled})
    CHECK(parse_manifest_state(to_string(s)) == s);
  CHECK(to_string(ManifestState::rolled_back) == "rolled-back");
  CHECK_FALSE(parse_manifest_state("done"));
  Manifest m;
  m.chain_id = "20261122-010203-0000abcd";
  m.run_dir = "/runs/x";
  auto text = manifest_to_json(m);
  const auto at = text.find("\"submitting\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"finished\"");
  const auto bad = manifest_from_json(text, "manifest.json");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "not a trnslurm manifest: unknown state 'finished'");
  // A journal line naming an unknown state is skipped like a torn one.
  apply_journal(m, "state finished\n");
  CHECK(m.state == ManifestState::submitting);
}
