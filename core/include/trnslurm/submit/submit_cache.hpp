#pragma once
// What a submit does with the compile cache (docs/cache.md): the chain's compile key, whether
// its precompile runs, is skipped or waits for another chain's, and the records of that.

#include <optional>
#include <string>
#include <vector>

#include "trnslurm/cache/compile_key.hpp"
#include "trnslurm/cache/precompile_decision.hpp"
#include "trnslurm/chain/chain_render.hpp"
#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"

namespace trnslurm {

struct SubmitCache {
  CacheLocation loc;
  CompileKey key;
  PrecompileMode mode = PrecompileMode::automatic;
  std::optional<WarmRecord> warm;
  std::optional<LiveCompile> live;
  PrecompileDecision decision;
  std::optional<CacheLock> lock;  // held from the decision until the chain's use is recorded
  std::string left_out;           // the recipe's reason for leaving its precompile out, if it does
};

// nullopt when the recipe keeps no compile cache (cache.enabled = false). A real submit locks the
// key and reads its marker; a dry run only reads.
Result<std::optional<SubmitCache>> prepare_cache(const Recipe& recipe, const Plan& plan, PrecompileMode mode,
                                                 bool dry_run, const TemplateValues& site);

// Whether another chain compiles the key now (cache.live): Slurm is asked only when the answer
// matters, for a real submit whose precompile would run, so that a dry run may be made where
// there is no Slurm. An error is squeue's.
Result<void> find_live_compile(SubmitCache& cache, bool dry_run, SlurmClient& slurm);

// The precompile and train stages' cache, before rendering.
void cache_inputs(const SubmitCache& cache, ChainInputs& inputs);

// Decides for the rendered chain: a skipped precompile leaves it, a waiting one also waits
// (afterany) for the other chain's compile.
void apply_cache(SubmitCache& cache, ChainSpec& chain);

// After the jobs are submitted (ids: one per stage of `chain`; none for a dry run): the chain's
// use in the cache (not for a dry run) and <run dir>/compile-cache.json. The note to print.
Result<std::string> record_cache(const SubmitCache& cache, const ChainSpec& chain, const std::string& created,
                                 const std::vector<JobId>& ids, bool dry_run);

// What a submit whose only selected stage is a precompile the cache leaves out says:
// "precompile skipped: cache warm since <date>, chain <X>" or "precompile not run (--precompile=never)".
std::string nothing_to_compile(const SubmitCache& cache);

}  // namespace trnslurm
