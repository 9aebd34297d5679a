#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "trnslurm/cache/precompile_decision.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;

namespace {

KeyUse compiling(std::string chain, JobId job) {
  KeyUse u;
  u.chain_id = std::move(chain);
  u.precompile = PrecompileRole::compiles;
  u.precompile_job = job;
  u.jobs = {job, job + 1};
  return u;
}

JobRow row(JobId id, std::string state, std::string reason = "") {
  JobRow r;
  r.id = id;
  r.state = std::move(state);
  r.reason = std::move(reason);
  return r;
}

}  // namespace

TEST_CASE("precompile_decision: auto skips a warm key, waits for a live compile, else compiles") {
  const WarmRecord warm{"0123456789abcdef", "20261124-100000-000-0000abcd", "12", "2026-11-24T10:05:00Z",
                        "n1"};
  const LiveCompile live{"20261124-110000-000-0000abcd", 31};
  using enum PrecompileRole;
  CHECK(decide_precompile(PrecompileMode::automatic, true, warm, live).role == skipped);
  CHECK(decide_precompile(PrecompileMode::automatic, true, std::nullopt, live).role == waits);
  CHECK(decide_precompile(PrecompileMode::automatic, true, std::nullopt, live).after->job == 31);
  CHECK(decide_precompile(PrecompileMode::automatic, true, std::nullopt, std::nullopt).role == compiles);
  // always compiles a warm key, but never beside another compile of it.
  CHECK(decide_precompile(PrecompileMode::always, true, warm, std::nullopt).role == compiles);
  CHECK(decide_precompile(PrecompileMode::always, true, warm, live).role == waits);
  CHECK(decide_precompile(PrecompileMode::never, true, std::nullopt, std::nullopt).role == not_run);
  // Without a precompile stage, train waits for a live compile of a cold key; never means never.
  CHECK(decide_precompile(PrecompileMode::automatic, false, std::nullopt, live).role == not_run);
  CHECK(decide_precompile(PrecompileMode::automatic, false, std::nullopt, live).after->job == 31);
  CHECK_FALSE(decide_precompile(PrecompileMode::automatic, false, warm, live).after);
  CHECK_FALSE(decide_precompile(PrecompileMode::never, false, std::nullopt, live).after);
  CHECK_FALSE(decide_precompile(PrecompileMode::automatic, false, std::nullopt, std::nullopt).after);
  CHECK(parse_precompile_mode("auto") == PrecompileMode::automatic);
  CHECK_FALSE(parse_precompile_mode("sometimes"));
}

TEST_CASE("precompile_decision: the live compile is the newest pending or running precompile") {
  const std::vector<KeyUse> uses{compiling("20261124-100000-000-0000abcd", 10),
                                 compiling("20261124-110000-000-0000abcd", 20),
                                 compiling("20261124-120000-000-0000abcd", 30)};
  CHECK(use_job_ids(uses) == std::vector<JobId>{10, 11, 20, 21, 30, 31});
  auto live = live_compile(uses, {row(10, "RUNNING"), row(20, "PENDING", "Dependency"), row(30, "FAILED")});
  REQUIRE(live);
  CHECK(live->job == 20);
  CHECK(live->chain_id == "20261124-110000-000-0000abcd");
  // Held waits for a person: not waited for. Forgotten ids are not live.
  CHECK_FALSE(live_compile(uses, {row(10, "PENDING", "JobHeldUser"), row(30, "COMPLETED")}));
  CHECK_FALSE(live_compile(uses, {}));
}

TEST_CASE("precompile_decision: a chain uses the key while a job of it is queued, running or held") {
  const std::vector<KeyUse> uses{compiling("20261124-100000-000-0000abcd", 10),
                                 compiling("20261124-110000-000-0000abcd", 20)};
  CHECK(live_chains(uses, {row(10, "COMPLETED"), row(11, "RUNNING"), row(20, "COMPLETED"),
                           row(21, "FAILED")}) == std::vector<std::string>{"20261124-100000-000-0000abcd"});
  CHECK(live_chains(uses, {row(21, "PENDING", "JobHeldUser")}) ==
        std::vector<std::string>{"20261124-110000-000-0000abcd"});
  CHECK(live_chains(uses, {row(10, "COMPLETED"), row(11, "COMPLETED")}).empty());
}

TEST_CASE("precompile_decision: what status says, and the run directory's record of it") {
  KeyUse skipped;
  skipped.chain_id = "20261124-110000-000-0000abcd";
  skipped.precompile = PrecompileRole::skipped;
  skipped.warm_since = "2026-11-24T10:05:00Z";
  skipped.warm_chain = "20261124-100000-000-0000abcd";
  CHECK(describe(skipped) ==
        "precompile skipped: cache warm since 2026-11-24T10:05:00Z, chain 20261124-100000-000-0000abcd");
  KeyUse waits = skipped;
  waits.precompile = PrecompileRole::waits;
  waits.waits_for_chain = "20261124-100000-000-0000abcd";
  waits.waits_for_job = 12;
  CHECK(describe(waits).find("waits for chain 20261124-100000-000-0000abcd (job 12)") != std::string::npos);
  KeyUse train_waits = waits;
  train_waits.precompile = PrecompileRole::not_run;
  CHECK(describe(train_waits) ==
        "precompile not run; train waits for chain 20261124-100000-000-0000abcd (job 12), which compiles the "
        "same key");

  // Once the key is warm, status says who compiled it.
  const WarmRecord by_other{"0123456789abcdef", "20261124-100000-000-0000abcd", "12", "2026-11-24T10:09:00Z",
                            "n1"};
  const WarmRecord by_self{"0123456789abcdef", "20261124-110000-000-0000abcd", "14", "2026-11-24T10:20:00Z",
                           "n2"};
  const ChainCache waited{"0123456789abcdef", "/fsx/cache", waits};
  CHECK(describe_now(waited, std::nullopt) == describe(waits));
  CHECK(describe_now(waited, by_other) ==
        "precompile skipped: chain 20261124-100000-000-0000abcd compiled the key: cache warm since "
        "2026-11-24T10:09:00Z");
  CHECK(describe_now(waited, by_self) ==
        "precompile compiled the key: cache warm since 2026-11-24T10:20:00Z");
  CHECK(describe_now(ChainCache{"0123456789abcdef", "/fsx/cache", skipped}, by_self) == describe(skipped));

  test::ScratchDir dir;
  CHECK_FALSE(read_chain_cache(dir.path()));
  REQUIRE(write_chain_cache(dir.path(), ChainCache{"0123456789abcdef", "/fsx/cache", skipped}));
  const auto back = read_chain_cache(dir.path());
  REQUIRE(back);
  CHECK(back->key == "0123456789abcdef");
  CHECK(back->cache_dir == "/fsx/cache");
  CHECK(describe(back->use) == describe(skipped));

  // A precompile the recipe leaves out (an eager TorchTitan configuration): status says why, from
  // the run directory's record.
  KeyUse eager;
  eager.chain_id = "20261124-120000-000-0000abcd";
  eager.precompile = PrecompileRole::not_run;
  eager.left_out = "none: an eager configuration compiles nothing ahead";
  CHECK(describe(eager) == "precompile none: an eager configuration compiles nothing ahead");
  REQUIRE(write_chain_cache(dir.path(), ChainCache{"0123456789abcdef", "/fsx/cache", eager}));
  const auto eager_back = read_chain_cache(dir.path());
  REQUIRE(eager_back);
  CHECK(describe(eager_back->use) == describe(eager));
}

TEST_CASE("precompile_decision: what status shows now: the marker read again, an unreadable one ignored") {
  test::ScratchDir run;
  test::ScratchDir cache;
  CHECK_FALSE(chain_cache_now(run.path()));  // no compile cache kept

  KeyUse waits;
  waits.chain_id = "20261124-110000-000-0000abcd";
  waits.precompile = PrecompileRole::waits;
  waits.waits_for_chain = "20261124-100000-000-0000abcd";
  waits.waits_for_job = 12;
  const std::string key = "0123456789abcdef";
  REQUIRE(write_chain_cache(run.path(), ChainCache{key, cache.path().string(), waits}));
  auto now = chain_cache_now(run.path());
  REQUIRE(now);
  CHECK(now->cache.key == key);
  CHECK(now->note == describe(waits));  // no marker yet: the line submit wrote

  const auto marker = warm_marker(CacheLocation{cache.path(), ""}, key);
  std::filesystem::create_directories(marker.parent_path());
  REQUIRE(write_file_atomic(marker, R"({"key":"0123456789abcdef","chain":"20261124-100000-000-0000abcd",)"
                                    R"("job":"12","since":"2026-11-24T10:09:00Z","host":"n1"})"));
  now = chain_cache_now(run.path());
  REQUIRE(now);
  CHECK(now->note ==
        "precompile skipped: chain 20261124-100000-000-0000abcd compiled the key: cache warm since "
        "2026-11-24T10:09:00Z");

  REQUIRE(write_file_atomic(marker, "not a marker"));
  now = chain_cache_now(run.path());
  REQUIRE(now);
  CHECK(now->note == describe(waits));
}
