#include "trnslurm/cache/precompile_decision.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace {

const JobRow* row_of(const std::vector<JobRow>& rows, JobId id) {
  const auto it = std::ranges::find(rows, id, &JobRow::id);
  return it == rows.end() ? nullptr : &*it;
}

}  // namespace

Result<PrecompileMode> parse_precompile_mode(std::string_view text) {
  if (text == "auto") return PrecompileMode::automatic;
  if (text == "always") return PrecompileMode::always;
  if (text == "never") return PrecompileMode::never;
  return fail(fmt::format("unknown precompile mode '{}'", text), "--precompile",
              "use auto (skip when the compile cache is warm), always or never");
}

std::vector<JobId> use_job_ids(const std::vector<KeyUse>& uses) {
  std::vector<JobId> ids;
  for (const auto& u : uses) ids.insert(ids.end(), u.jobs.begin(), u.jobs.end());
  std::ranges::sort(ids);
  const auto [first, last] = std::ranges::unique(ids);
  ids.erase(first, last);
  return ids;
}

std::optional<LiveCompile> live_compile(const std::vector<KeyUse>& uses, const std::vector<JobRow>& rows) {
  std::optional<LiveCompile> newest;
  for (const auto& u : uses) {
    if (!u.precompile_job) continue;
    const auto* row = row_of(rows, *u.precompile_job);
    if (row == nullptr) continue;
    const auto phase = phase_of(*row);
    if ((phase == JobPhase::pending || phase == JobPhase::running) &&
        (!newest || u.chain_id > newest->chain_id))
      newest = LiveCompile{u.chain_id, *u.precompile_job};
  }
  return newest;
}

std::vector<std::string> live_chains(const std::vector<KeyUse>& uses, const std::vector<JobRow>& rows) {
  std::vector<std::string> out;
  for (const auto& u : uses)
    if (std::ranges::any_of(u.jobs, [&](JobId id) {
          const auto* row = row_of(rows, id);
          return row != nullptr && is_active(phase_of(*row));
        }))
      out.push_back(u.chain_id);
  return out;
}

PrecompileDecision decide_precompile(PrecompileMode mode, bool selected,
                                     const std::optional<WarmRecord>& warm,
                                     const std::optional<LiveCompile>& live) {
  if (mode == PrecompileMode::never) return {PrecompileRole::not_run, std::nullopt, std::nullopt};
  // A chain without its precompile (--from train, a disabled stage) would compile in its train
  // job: that train waits for the other chain's compile instead.
  if (!selected) return {PrecompileRole::not_run, std::nullopt, warm ? std::nullopt : live};
  if (mode == PrecompileMode::automatic && warm) return {PrecompileRole::skipped, warm, std::nullopt};
  // Even --precompile=always waits: two compiles of one key at once corrupt a shared cache.
  if (live) return {PrecompileRole::waits, std::nullopt, live};
  return {PrecompileRole::compiles, std::nullopt, std::nullopt};
}

std::string describe(const KeyUse& use) {
  switch (use.precompile) {
    case PrecompileRole::skipped:
      return fmt::format("precompile skipped: cache warm since {}, chain {}", use.warm_since,
                         use.warm_chain.empty() ? "unknown" : use.warm_chain);
    case PrecompileRole::waits:
      return fmt::format(
          "precompile waits for chain {} (job {}), which compiles the same key; it compiles only if that one "
          "fails",
          use.waits_for_chain, use.waits_for_job ? std::to_string(*use.waits_for_job) : "?");
    case PrecompileRole::compiles:
      return "precompile compiles into the cache";
    case PrecompileRole::not_run:
      if (use.waits_for_chain.empty())
        return use.left_out.empty() ? "precompile not run" : "precompile " + use.left_out;
      return fmt::format("precompile not run; train waits for chain {} (job {}), which compiles the same key",
                         use.waits_for_chain, use.waits_for_job ? std::to_string(*use.waits_for_job) : "?");
  }
  return "";
}

std::string describe_now(const ChainCache& cache, const std::optional<WarmRecord>& warm) {
  const auto role = cache.use.precompile;
  if (warm && warm->chain == cache.use.chain_id &&
      (role == PrecompileRole::compiles || role == PrecompileRole::waits))
    return fmt::format("precompile compiled the key: cache warm since {}", warm->since);
  if (warm && role == PrecompileRole::waits && warm->chain == cache.use.waits_for_chain)
    return fmt::format("precompile skipped: chain {} compiled the key: cache warm since {}", warm->chain,
                       warm->since);
  return describe(cache.use);
}

Result<void> write_chain_cache(const std::filesystem::path& run_dir, const ChainCache& cache) {
  auto j = to_json(cache.use);
  j["key"] = cache.key;
  j["cache_dir"] = cache.cache_dir;
  return write_file_atomic(run_dir / "compile-cache.json", j.dump(2) + "\n");
}

std::optional<ChainCache> read_chain_cache(const std::filesystem::path& run_dir) {
  const auto path = run_dir / "compile-cache.json";
  auto text = read_file(path, 1 << 20);
  if (!text) return std::nullopt;
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  auto use = key_use_from_json(j, path.string());
  if (!use || !j.contains("key") || !j["key"].is_string()) return std::nullopt;
  return ChainCache{j["key"].get<std::string>(), j.value("cache_dir", std::string()), std::move(*use)};
}

std::optional<ChainCacheNow> chain_cache_now(const std::filesystem::path& run_dir) {
  auto cache = read_chain_cache(run_dir);
  if (!cache) return std::nullopt;
  const auto warm = read_warm(CacheLocation{cache->cache_dir, ""}, cache->key);
  auto note = warm ? describe_now(*cache, *warm) : describe(cache->use);
  return ChainCacheNow{std::move(*cache), std::move(note)};
}

}  // namespace trnslurm
