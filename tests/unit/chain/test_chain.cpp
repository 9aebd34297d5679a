#include <catch2/catch.hpp>

#include <algorithm>

#include "trnslurm/chain/chain.hpp"

using namespace trnslurm;

namespace {
ChainSpec four_stages() {
  ChainSpec c;
  c.chain_id = "20261122-010203-0000abcd";
  c.run_dir = "/runs/20261122-010203-0000abcd";
  for (auto s : stage_names) c.stages.push_back(StageSpec{std::string(s), "#!/bin/bash\n", 1, "", {}, {}});
  return c;
}
bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST_CASE("chain: ids are sortable, unique per random draw and safe") {
  const auto t = std::chrono::system_clock::from_time_t(1'700'000'000);
  CHECK(make_chain_id(t, 0xabcd) == "20231114-221320-000-0000abcd");
  CHECK(make_chain_id(t + std::chrono::milliseconds(7), 1) == "20231114-221320-007-00000001");
  CHECK(make_chain_id(t + std::chrono::milliseconds(7), 0) > make_chain_id(t, 0xffffffff));
  CHECK(make_chain_id(t, 1) != make_chain_id(t, 2));
  CHECK(is_chain_id(make_chain_id(t, 7)));
  CHECK_FALSE(is_chain_id("../etc"));
  CHECK_FALSE(is_chain_id(""));
  CHECK_FALSE(is_chain_id("a b"));
}

TEST_CASE("chain: names and comments carry chain and stage") {
  CHECK(job_name("c1", "train") == "trn-c1-train");
  CHECK(job_comment("c1", "train") == "trnslurm:c1:train");
}

TEST_CASE("chain: sbatch argv") {
  auto c = four_stages();
  c.slurm.partition = "trn1";
  c.slurm.account = "acct";
  c.slurm.sbatch_args = {"--mail-type=END", "--begin=now"};
  c.stages[2].nodes = 4;
  c.stages[2].time = "02:00:00";
  c.stages[2].sbatch_args = {"--partition=big"};
  const auto first = sbatch_argv(c, 0, std::nullopt);
  CHECK(first.front() == "sbatch");
  CHECK(first.back() == "/runs/20261122-010203-0000abcd/convert.sh");
  CHECK(has(first, "--parsable"));
  CHECK(has(first, "--kill-on-invalid-dep=yes"));
  CHECK(has(first, "--job-name=trn-20261122-010203-0000abcd-convert"));
  CHECK(has(first, "--comment=trnslurm:20261122-010203-0000abcd:convert"));
  CHECK(has(first, "--output=/runs/20261122-010203-0000abcd/logs/convert-%j.out"));
  CHECK(has(first, "--partition=trn1"));
  CHECK(has(first, "--account=acct"));
  CHECK_FALSE(has(first, "--qos="));
  CHECK(has(first, "--exclusive"));
  CHECK(has(first, "--mail-type=END"));
  CHECK(std::none_of(first.begin(), first.end(), [](auto& a) { return a.starts_with("--dependency"); }));
  const auto train = sbatch_argv(c, 2, JobId{42});
  CHECK(has(train, "--dependency=afterok:42"));
  CHECK(has(train, "--nodes=4"));
  CHECK(has(train, "--time=02:00:00"));
  // A stage's own arguments come after the chain's, so they win.
  CHECK(std::find(train.begin(), train.end(), "--partition=big") >
        std::find(train.begin(), train.end(), "--partition=trn1"));
  CHECK_FALSE(has(first, "--partition=big"));
  c.slurm.exclusive = false;
  CHECK_FALSE(has(sbatch_argv(c, 0, std::nullopt), "--exclusive"));
}

TEST_CASE("chain: a user's --kill-on-invalid-dep replaces ours (sbatch would keep both, and yes wins)") {
  auto c = four_stages();
  CHECK(has(sbatch_argv(c, 1, JobId{1}), "--kill-on-invalid-dep=yes"));
  c.slurm.sbatch_args = {"--kill-on-invalid-dep=no"};
  const auto argv = sbatch_argv(c, 1, JobId{1});
  CHECK_FALSE(has(argv, "--kill-on-invalid-dep=yes"));
  CHECK(has(argv, "--kill-on-invalid-dep=no"));
  c.slurm.sbatch_args.clear();
  c.stages[1].sbatch_args = {"--kill-on-invalid-dep=no"};
  CHECK_FALSE(has(sbatch_argv(c, 1, JobId{1}), "--kill-on-invalid-dep=yes"));
  CHECK(has(sbatch_argv(c, 2, JobId{1}), "--kill-on-invalid-dep=yes"));
}

TEST_CASE("chain: a % in the run directory is escaped for Slurm's filename patterns") {
  CHECK(output_pattern("/r/50%", "train").string() == "/r/50%%/logs/train-%j.out");
  CHECK(output_path("/r/50%", "train", 7).string() == "/r/50%/logs/train-7.out");
}

TEST_CASE("chain: stage selection") {
  const auto stages = four_stages().stages;
  auto names = [](const std::vector<StageSpec>& s) {
    std::string out;
    for (const auto& x : s) out += x.name + " ";
    return out;
  };
  CHECK(names(*select_stages(stages, {})) == "convert precompile train convert_back ");
  CHECK(names(*select_stages(stages, {"train", "", ""})) == "train ");
  CHECK(names(*select_stages(stages, {"", "precompile", ""})) == "precompile train convert_back ");
  CHECK(names(*select_stages(stages, {"", "", "precompile"})) == "convert precompile ");
  CHECK(names(*select_stages(stages, {"", "precompile", "train"})) == "precompile train ");
  CHECK_FALSE(select_stages(stages, {"", "train", "convert"}));
  CHECK_FALSE(select_stages(stages, {"bogus", "", ""}));
  CHECK_FALSE(select_stages(stages, {"train", "convert", ""}));
  auto unknown = select_stages(stages, {"", "trian", ""});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().hint.find("precompile") != std::string::npos);
}

TEST_CASE("chain: parse_job_id") {
  CHECK(*parse_job_id("123\n") == 123);
  CHECK(*parse_job_id("77;cluster") == 77);
  CHECK_FALSE(parse_job_id(""));
  CHECK_FALSE(parse_job_id("Submitted batch job 5"));
  CHECK_FALSE(parse_job_id("0"));
}

TEST_CASE("chain: a stage that also waits for another chain's job joins both in one --dependency") {
  auto c = four_stages();
  c.stages[1].also_after.emplace_back("afterany:77");
  const auto argv = sbatch_argv(c, 1, JobId{5});
  CHECK(has(argv, "--dependency=afterok:5,afterany:77"));
  CHECK(std::ranges::count_if(argv, [](const std::string& a) { return a.starts_with("--dependency"); }) == 1);
  // First in its chain: only the other chain's job.
  CHECK(has(sbatch_argv(c, 1, std::nullopt), "--dependency=afterany:77"));
}
