#pragma once
// Whether a chain compiles, skips its precompile or waits for another chain's compile of the same
// key (docs/cache.md), and how that is told in `submit` and `status`.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/cache/cache_store.hpp"
#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// submit --precompile: auto skips a warm key, always compiles, never leaves precompile out.
enum class PrecompileMode { automatic, always, never };
Result<PrecompileMode> parse_precompile_mode(std::string_view text);

// Another chain's precompile job of the key, pending or running.
struct LiveCompile {
  std::string chain_id;
  JobId job = 0;
};

// The job ids of the key's uses that squeue is asked about.
std::vector<JobId> use_job_ids(const std::vector<KeyUse>& uses);
// The newest use whose precompile job `rows` shows pending or running (not held: a held job
// waits for a person, and a chain waiting for it could wait for ever).
std::optional<LiveCompile> live_compile(const std::vector<KeyUse>& uses, const std::vector<JobRow>& rows);
// The chains with a job of theirs that uses the cache still pending, running or held.
std::vector<std::string> live_chains(const std::vector<KeyUse>& uses, const std::vector<JobRow>& rows);

struct PrecompileDecision {
  PrecompileRole role = PrecompileRole::compiles;
  std::optional<WarmRecord> warm;    // skipped: what the marker says
  std::optional<LiveCompile> after;  // waits (or not_run, for the train stage): whose compile
};
// `selected`: the chain has a precompile stage (enabled and selected). Without one, a live
// compile of a cold key is still returned in `after`: the chain's train waits for it.
PrecompileDecision decide_precompile(PrecompileMode mode, bool selected,
                                     const std::optional<WarmRecord>& warm,
                                     const std::optional<LiveCompile>& live);

// One line for `submit` and `status`: "precompile skipped: cache warm since <date>, chain <X>".
std::string describe(const KeyUse& use);

// <run dir>/compile-cache.json: the chain's key, cache directory and use of it.
struct ChainCache {
  std::string key;
  std::string cache_dir;
  KeyUse use;
};
// What `status` says: once the key's marker exists, who compiled it, for a chain that compiled or
// waited (its submit-time line would still say "waits" after the other chain's compile ended);
// else describe(use).
std::string describe_now(const ChainCache& cache, const std::optional<WarmRecord>& warm);
Result<void> write_chain_cache(const std::filesystem::path& run_dir, const ChainCache& cache);
// nullopt when the chain kept no compile cache (or the file is unreadable: status goes on without).
std::optional<ChainCache> read_chain_cache(const std::filesystem::path& run_dir);

// What status shows of a chain's compile cache: the run directory's record and describe_now of
// it with the key's marker read now (an unreadable marker leaves describe(use), the line submit
// wrote). nullopt when the chain kept no compile cache.
struct ChainCacheNow {
  ChainCache cache;
  std::string note;
};
std::optional<ChainCacheNow> chain_cache_now(const std::filesystem::path& run_dir);

}  // namespace trnslurm
