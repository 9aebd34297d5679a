#pragma once
// The compile cache on disk (docs/cache.md): one directory per compile key under the recipe's
// cache.dir, holding the key's inputs, the marker a successful precompile writes, a record of
// every chain that used the key and, unless cache.url sends them elsewhere, the compiled graphs.
//
//   <cache.dir>/<key>/key.json           the inputs of the key (compile_key.hpp), for `cache list`
//   <cache.dir>/<key>/warm.json          written by the precompile job after it succeeded
//   <cache.dir>/<key>/chains/<chain>.json  one per chain that used the key (written by submit)
//   <cache.dir>/<key>/neuron/            NEURON_COMPILE_CACHE_URL (else <cache.url>/<key>)
//   <cache.dir>/.<key>.lock              held by submit and clear while they decide

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/cache/compile_key.hpp"
#include "trnslurm/chain/chain.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/file_lock.hpp"

namespace trnslurm {

struct CacheLocation {
  std::filesystem::path dir;  // absolute: the records, and the graphs unless `url`
  std::string url;            // "" or where the graphs go instead (s3://...)
};
CacheLocation cache_location(const Recipe& recipe);

std::filesystem::path key_dir(const CacheLocation& loc, std::string_view key);
std::filesystem::path warm_marker(const CacheLocation& loc, std::string_view key);
// NEURON_COMPILE_CACHE_URL for the key's precompile and train stages.
std::string graphs_url(const CacheLocation& loc, std::string_view key);

// warm.json, as scripts/precompile_cache.sh writes it.
struct WarmRecord {
  std::string key;
  std::string chain;
  std::string job;
  std::string since;  // UTC, ISO 8601
  std::string host;
};
// nullopt: no marker (the key is cold). A marker that does not parse is an error naming it.
Result<std::optional<WarmRecord>> read_warm(const CacheLocation& loc, std::string_view key);

// What a chain did with the key's precompile (docs/cache.md).
enum class PrecompileRole {
  compiles,  // its precompile stage compiles (and may end at once if the key is warm by then)
  waits,     // its precompile waits for another chain's compile of the key, then compiles if need be
  skipped,   // the key was warm at submit: no precompile stage
  not_run,   // --precompile=never, or a stage selection without precompile
};
std::string_view to_string(PrecompileRole role);
std::optional<PrecompileRole> parse_precompile_role(std::string_view text);

// <cache.dir>/<key>/chains/<chain>.json.
struct KeyUse {
  std::string chain_id;
  std::string run_dir;
  std::string created;  // UTC, ISO 8601
  PrecompileRole precompile = PrecompileRole::compiles;
  std::optional<JobId> precompile_job;  // compiles, waits: the chain's own precompile job
  std::vector<JobId> jobs;              // the chain's jobs that use the cache: precompile, train
  std::string waits_for_chain;          // waits: the chain compiling the key
  std::optional<JobId> waits_for_job;   // and its precompile job
  std::string warm_since;               // skipped: the marker's date and chain
  std::string warm_chain;
  std::string left_out;  // not run: why the recipe leaves its precompile out (an eager TorchTitan one)
};
nlohmann::json to_json(const KeyUse& use);
Result<KeyUse> key_use_from_json(const nlohmann::json& j, const std::string& where);

// Creates the key's directory and writes key.json (kept when it exists) and the chain's record.
Result<void> record_use(const CacheLocation& loc, const CompileKey& key, const KeyUse& use);
// The key's records, oldest chain first; records that do not parse are left out.
std::vector<KeyUse> read_uses(const CacheLocation& loc, std::string_view key);

// What `cache list` shows of one key. (clang-tidy 16 cannot see that the implicit members of a
// struct holding an nlohmann::json do not throw.)
struct KeyEntry {  // NOLINT(bugprone-exception-escape)
  std::string key;
  nlohmann::json inputs;  // key.json's inputs; null when missing
  std::optional<WarmRecord> warm;
  std::vector<KeyUse> uses;
  std::optional<std::uintmax_t> bytes;  // the graphs' size; nullopt when they are under cache.url
  std::string last_use;                 // the newest chain's creation or the marker's date
};
// Every key directory under loc.dir, by key.
std::vector<KeyEntry> list_keys(const CacheLocation& loc);

// Removes the key's directory (records and graphs under cache.dir). Graphs under cache.url are
// not touched: the caller says where they are.
Result<void> remove_key(const CacheLocation& loc, std::string_view key);

// flock on <cache.dir>/.<key>.lock, held while a submit decides and records its use of the key
// (two submits of one key never both decide to compile) and while clear removes it.
using CacheLock = FileLock;
// Waits for the lock; creates cache.dir if need be.
Result<CacheLock> lock_key(const CacheLocation& loc, std::string_view key);

}  // namespace trnslurm
