#include "trnslurm/cache/cache_store.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t record_limit = 1 << 20;  // a record is a few hundred bytes

std::string string_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<JobId> job_of(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<JobId>();
}

// Bytes of the regular files under `dir`; a file that vanishes meanwhile counts as 0.
std::uintmax_t tree_bytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) {
      const auto n = it->file_size(ec2);
      if (!ec2) total += n;
    }
  }
  return total;
}

}  // namespace

CacheLocation cache_location(const Recipe& recipe) {
  return CacheLocation{fs::path(recipe.cache.dir), recipe.cache.url};
}

fs::path key_dir(const CacheLocation& loc, std::string_view key) {
  return loc.dir / key;
}

fs::path warm_marker(const CacheLocation& loc, std::string_view key) {
  return key_dir(loc, key) / "warm.json";
}

std::string graphs_url(const CacheLocation& loc, std::string_view key) {
  if (loc.url.empty()) return (key_dir(loc, key) / "neuron").string();
  return fmt::format("{}{}{}", loc.url, loc.url.ends_with('/') ? "" : "/", key);
}

Result<std::optional<WarmRecord>> read_warm(const CacheLocation& loc, std::string_view key) {
  const auto path = warm_marker(loc, key);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<WarmRecord>{};
  auto text = read_file(path, record_limit);
  const auto bad = [&](std::string_view what) {
    return fail(
        fmt::format("the compile cache's marker {}", what), path.string(),
        fmt::format("remove it ('trnslurm cache clear --key {}'); the next precompile writes it again", key));
  };
  if (!text) return bad("cannot be read");
  const auto j = json::parse(*text, nullptr, false);
  if (!j.is_object() || string_of(j, "key") != key) return bad("is not one trnslurm wrote for this key");
  return std::optional<WarmRecord>{WarmRecord{string_of(j, "key"), string_of(j, "chain"), string_of(j, "job"),
                                              string_of(j, "since"), string_of(j, "host")}};
}

std::string_view to_string(PrecompileRole role) {
  switch (role) {
    case PrecompileRole::compiles:
      return "compiles";
    case PrecompileRole::waits:
      return "waits";
    case PrecompileRole::skipped:
      return "skipped";
    case PrecompileRole::not_run:
      return "not-run";
  }
  return "compiles";
}

std::optional<PrecompileRole> parse_precompile_role(std::string_view text) {
  for (const auto r :
       {PrecompileRole::compiles, PrecompileRole::waits, PrecompileRole::skipped, PrecompileRole::not_run})
    if (to_string(r) == text) return r;
  return std::nullopt;
}

json to_json(const KeyUse& use) {
  json j{{"chain", use.chain_id},
         {"run_dir", use.run_dir},
         {"created", use.created},
         {"precompile", to_string(use.precompile)},
         {"jobs", use.jobs}};
  j["precompile_job"] = use.precompile_job ? json(*use.precompile_job) : json(nullptr);
  if (!use.waits_for_chain.empty()) j["waits_for_chain"] = use.waits_for_chain;
  if (use.waits_for_job) j["waits_for_job"] = *use.waits_for_job;
  if (!use.warm_since.empty()) j["warm_since"] = use.warm_since;
  if (!use.warm_chain.empty()) j["warm_chain"] = use.warm_chain;
  if (!use.left_out.empty()) j["left_out"] = use.left_out;
  return j;
}

Result<KeyUse> key_use_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return fail("not a JSON object", where);
  KeyUse u;
  u.chain_id = string_of(j, "chain");
  if (!is_chain_id(u.chain_id)) return fail("no valid chain id", where);
  u.run_dir = string_of(j, "run_dir");
  u.created = string_of(j, "created");
  const auto role = parse_precompile_role(string_of(j, "precompile"));
  if (!role) return fail("unknown precompile role", where);
  u.precompile = *role;
  u.precompile_job = job_of(j, "precompile_job");
  if (const auto it = j.find("jobs"); it != j.end() && it->is_array())
    for (const auto& id : *it)
      if (id.is_number_unsigned()) u.jobs.push_back(id.get<JobId>());
  u.waits_for_chain = string_of(j, "waits_for_chain");
  u.waits_for_job = job_of(j, "waits_for_job");
  u.warm_since = string_of(j, "warm_since");
  u.warm_chain = string_of(j, "warm_chain");
  u.left_out = string_of(j, "left_out");
  return u;
}

Result<void> record_use(const CacheLocation& loc, const CompileKey& key, const KeyUse& use) {
  const auto dir = key_dir(loc, key.hex);
  std::error_code ec;
  fs::create_directories(dir / "chains", ec);
  if (ec)
    return fail(fmt::format("cannot create the compile cache's directory: {}", ec.message()), dir.string(),
                "cache.dir must be a directory the head node and the jobs share and you may write");
  if (!fs::exists(dir / "key.json", ec)) {
    json inputs = json::array();
    for (const auto& i : key.inputs) inputs.push_back({{"name", i.name}, {"value", i.value}, {"why", i.why}});
    const json doc{{"key", key.hex}, {"inputs", inputs}};
    if (auto w = write_file_atomic(dir / "key.json", doc.dump(2) + "\n"); !w) return w;
  }
  return write_file_atomic(dir / "chains" / (use.chain_id + ".json"), to_json(use).dump(2) + "\n");
}

std::vector<KeyUse> read_uses(const CacheLocation& loc, std::string_view key) {
  std::vector<KeyUse> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(key_dir(loc, key) / "chains", ec)) {
    if (f.path().extension() != ".json") continue;
    auto text = read_file(f.path(), record_limit);
    if (!text) continue;
    auto use = key_use_from_json(json::parse(*text, nullptr, false), f.path().string());
    if (use) out.push_back(std::move(*use));
  }
  // Chain ids sort by time.
  std::ranges::sort(out, {}, &KeyUse::chain_id);
  return out;
}

std::vector<KeyEntry> list_keys(const CacheLocation& loc) {
  std::vector<KeyEntry> out;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(loc.dir, ec)) {
    const auto name = d.path().filename().string();
    std::error_code ec2;
    if (!is_compile_key(name) || !d.is_directory(ec2)) continue;
    KeyEntry e;
    e.key = name;
    if (auto text = read_file(d.path() / "key.json", record_limit)) {
      const auto j = json::parse(*text, nullptr, false);
      if (j.is_object() && j.contains("inputs")) e.inputs = j["inputs"];
    }
    if (auto warm = read_warm(loc, name); warm && *warm) e.warm = **warm;
    e.uses = read_uses(loc, name);
    if (loc.url.empty()) e.bytes = tree_bytes(d.path() / "neuron");
    e.last_use = e.warm ? e.warm->since : std::string();
    for (const auto& u : e.uses) e.last_use = std::max(e.last_use, u.created);
    out.push_back(std::move(e));
  }
  std::ranges::sort(out, {}, &KeyEntry::key);
  return out;
}

Result<void> remove_key(const CacheLocation& loc, std::string_view key) {
  if (!is_compile_key(key))
    return fail(fmt::format("'{}' is not a compile key", key), "--key",
                "keys are 16 hex digits: trnslurm cache list");
  const auto dir = key_dir(loc, key);
  // Renamed out of the way first: a job that starts meanwhile sees no half-removed key.
  const auto trash = loc.dir / fmt::format(".{}.removing-{}", key, ::getpid());
  std::error_code ec;
  fs::rename(dir, trash, ec);
  if (ec) return fail(fmt::format("cannot remove the key: {}", ec.message()), dir.string());
  fs::remove_all(trash, ec);
  if (ec) return fail(fmt::format("cannot remove the key's files: {}", ec.message()), trash.string());
  return {};
}

Result<CacheLock> lock_key(const CacheLocation& loc, std::string_view key) {
  std::error_code ec;
  fs::create_directories(loc.dir, ec);
  // A file system without flock does not stop the submit: the precompile job's own check of
  // the marker still keeps a second compile from running after the first one succeeded.
  auto lock = FileLock::acquire(loc.dir / fmt::format(".{}.lock", key), FileLock::Wait::yes,
                                "the compile cache's lock");
  if (!lock)
    return fail(lock.error().what, lock.error().where,
                "cache.dir must be a directory the head node and the jobs share and you may write");
  return lock;
}

}  // namespace trnslurm
