#include "trnslurm/submit/submit_cache.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/chain/upstream_stage.hpp"

namespace trnslurm {
namespace {

std::optional<std::size_t> stage_at(const ChainSpec& chain, std::string_view name) {
  const auto it = std::ranges::find(chain.stages, name, &StageSpec::name);
  if (it == chain.stages.end()) return std::nullopt;
  return static_cast<std::size_t>(it - chain.stages.begin());
}

}  // namespace

Result<std::optional<SubmitCache>> prepare_cache(const Recipe& recipe, const Plan& plan, PrecompileMode mode,
                                                 bool dry_run, const TemplateValues& site) {
  if (!recipe.cache.enabled) return std::optional<SubmitCache>{};
  auto values = recipe.values;
  for (const auto& [k, v] : site) values.insert_or_assign(k, v);
  if (auto r = render_upstream_paths(recipe, values); !r) return std::unexpected(r.error());
  const auto venv = values.contains("upstream.venv") ? values.at("upstream.venv") : std::string();
  auto key = compile_key(recipe, plan, read_key_files(recipe, venv));
  if (!key) return std::unexpected(key.error());
  SubmitCache c;
  c.loc = cache_location(recipe);
  c.key = std::move(*key);
  c.mode = mode;
  c.left_out = recipe.stage("precompile").left_out;
  if (!dry_run) {
    auto lock = lock_key(c.loc, c.key.hex);
    if (!lock) return std::unexpected(lock.error());
    c.lock.emplace(std::move(*lock));
  }
  auto warm = read_warm(c.loc, c.key.hex);
  if (!warm) return std::unexpected(warm.error());
  c.warm = *warm;
  return std::optional<SubmitCache>{std::move(c)};
}

Result<void> find_live_compile(SubmitCache& cache, bool dry_run, SlurmClient& slurm) {
  const bool skip =
      cache.mode == PrecompileMode::never || (cache.mode == PrecompileMode::automatic && cache.warm);
  if (dry_run || skip) return {};
  const auto uses = read_uses(cache.loc, cache.key.hex);
  const auto ids = use_job_ids(uses);
  if (ids.empty()) return {};
  auto rows = slurm.squeue(ids);
  if (!rows) return std::unexpected(rows.error());
  cache.live = live_compile(uses, *rows);
  return {};
}

void cache_inputs(const SubmitCache& cache, ChainInputs& inputs) {
  inputs.compile_cache =
      CompileCacheUse{cache.key.hex, graphs_url(cache.loc, cache.key.hex),
                      warm_marker(cache.loc, cache.key.hex), cache.mode == PrecompileMode::automatic};
}

void apply_cache(SubmitCache& cache, ChainSpec& chain) {
  const auto at = stage_at(chain, "precompile");
  cache.decision = decide_precompile(cache.mode, at.has_value(), cache.warm, cache.live);
  if (at &&
      (cache.decision.role == PrecompileRole::skipped || cache.decision.role == PrecompileRole::not_run))
    chain.stages.erase(chain.stages.begin() + static_cast<std::ptrdiff_t>(*at));
  if (!cache.decision.after) return;
  // Who waits for the other chain's compile: this chain's precompile, else its train, which would
  // compile beside it. afterany, not afterok: when that compile fails, this precompile runs and
  // compiles itself; when it succeeds, this one finds the marker and ends at once
  // (scripts/precompile_cache.sh).
  const auto waiter = at ? at : stage_at(chain, "train");
  if (waiter)
    chain.stages[*waiter].also_after.push_back(fmt::format("afterany:{}", cache.decision.after->job));
}

Result<std::string> record_cache(const SubmitCache& cache, const ChainSpec& chain, const std::string& created,
                                 const std::vector<JobId>& ids, bool dry_run) {
  if (!stage_at(chain, "precompile") && !stage_at(chain, "train")) return std::string();
  KeyUse use;
  use.chain_id = chain.chain_id;
  use.run_dir = chain.run_dir.string();
  use.created = created;
  use.precompile = cache.decision.role;
  for (std::size_t k = 0; k < chain.stages.size() && k < ids.size(); ++k) {
    if (chain.stages[k].name == "precompile") use.precompile_job = ids[k];
    if (chain.stages[k].name == "precompile" || chain.stages[k].name == "train") use.jobs.push_back(ids[k]);
  }
  if (cache.decision.after) {
    use.waits_for_chain = cache.decision.after->chain_id;
    use.waits_for_job = cache.decision.after->job;
  }
  if (use.precompile == PrecompileRole::not_run) use.left_out = cache.left_out;
  if (cache.decision.warm) {
    use.warm_since = cache.decision.warm->since;
    use.warm_chain = cache.decision.warm->chain;
  }
  if (!dry_run)
    if (auto r = record_use(cache.loc, cache.key, use); !r) return std::unexpected(r.error());
  if (auto r = write_chain_cache(chain.run_dir, ChainCache{cache.key.hex, cache.loc.dir.string(), use}); !r)
    return std::unexpected(r.error());
  return fmt::format("compile key {}: {}", cache.key.hex, describe(use));
}

std::string nothing_to_compile(const SubmitCache& cache) {
  return cache.warm && cache.mode != PrecompileMode::never
             ? fmt::format("precompile skipped: cache warm since {}, chain {}", cache.warm->since,
                           cache.warm->chain)
             : std::string("precompile not run (--precompile=never)");
}

}  // namespace trnslurm
