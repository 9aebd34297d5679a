#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "fixtures.hpp"
#include "trnslurm/cache/cache_store.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;

namespace {

CompileKey a_key() {
  return CompileKey{"0123456789abcdef", {{"train.tp", "2", "sharding"}}};
}

KeyUse a_use(std::string chain, PrecompileRole role, std::vector<JobId> jobs) {
  KeyUse u;
  u.chain_id = std::move(chain);
  u.run_dir = "/runs/" + u.chain_id;
  u.created = "2026-11-24T10:00:00Z";
  u.precompile = role;
  if (role == PrecompileRole::compiles && !jobs.empty()) u.precompile_job = jobs.front();
  u.jobs = std::move(jobs);
  return u;
}

}  // namespace

TEST_CASE("cache_store: where a key's records and graphs go") {
  const CacheLocation shared{"/fsx/neuron-cache/llama3-8b", ""};
  CHECK(key_dir(shared, "0123456789abcdef") == "/fsx/neuron-cache/llama3-8b/0123456789abcdef");
  CHECK(warm_marker(shared, "0123456789abcdef") == "/fsx/neuron-cache/llama3-8b/0123456789abcdef/warm.json");
  CHECK(graphs_url(shared, "0123456789abcdef") == "/fsx/neuron-cache/llama3-8b/0123456789abcdef/neuron");
  const CacheLocation s3{"/fsx/neuron-cache/llama3-8b", "s3://bucket/cache/"};
  CHECK(graphs_url(s3, "0123456789abcdef") == "s3://bucket/cache/0123456789abcdef");
  CHECK(graphs_url(CacheLocation{"/d", "s3://bucket/cache"}, "0123456789abcdef") ==
        "s3://bucket/cache/0123456789abcdef");
}

TEST_CASE("cache_store: a key is cold until its marker exists, and a foreign marker is an error") {
  test::ScratchDir dir;
  const CacheLocation loc{dir.path(), ""};
  auto cold = read_warm(loc, "0123456789abcdef");
  REQUIRE(cold);
  CHECK_FALSE(cold->has_value());
  std::filesystem::create_directories(key_dir(loc, "0123456789abcdef"));
  // As scripts/precompile_cache.sh writes it.
  REQUIRE(write_file_atomic(
      warm_marker(loc, "0123456789abcdef"),
      R"({"key": "0123456789abcdef", "chain": "20261124-100000-000-0000abcd", "job": "12", )"
      R"("since": "2026-11-24T10:05:00Z", "host": "n1"})"));
  auto warm = read_warm(loc, "0123456789abcdef");
  REQUIRE(warm);
  REQUIRE(warm->has_value());
  CHECK((*warm)->since == "2026-11-24T10:05:00Z");
  CHECK((*warm)->chain == "20261124-100000-000-0000abcd");
  REQUIRE(write_file_atomic(warm_marker(loc, "0123456789abcdef"), R"({"key": "ffffffffffffffff"})"));
  auto foreign = read_warm(loc, "0123456789abcdef");
  REQUIRE_FALSE(foreign);
  CHECK(foreign.error().hint.find("cache clear --key 0123456789abcdef") != std::string::npos);
}

TEST_CASE("cache_store: uses are recorded per chain and listed with size and last use") {
  test::ScratchDir dir;
  const CacheLocation loc{dir.path(), ""};
  const auto key = a_key();
  auto first = a_use("20261124-100000-000-0000abcd", PrecompileRole::compiles, {11, 12});
  auto second = a_use("20261124-110000-000-0000abcd", PrecompileRole::skipped, {21});
  second.created = "2026-11-24T11:00:00Z";
  second.warm_since = "2026-11-24T10:05:00Z";
  second.warm_chain = first.chain_id;
  REQUIRE(record_use(loc, key, second));
  REQUIRE(record_use(loc, key, first));
  const auto uses = read_uses(loc, key.hex);
  REQUIRE(uses.size() == 2);
  CHECK(uses[0].chain_id == first.chain_id);  // oldest first
  CHECK(uses[0].precompile_job == JobId{11});
  CHECK(uses[1].precompile == PrecompileRole::skipped);
  CHECK(uses[1].warm_chain == first.chain_id);

  std::filesystem::create_directories(key_dir(loc, key.hex) / "neuron" / "neuronxcc-x" / "MODULE_1+ab");
  std::ofstream(key_dir(loc, key.hex) / "neuron" / "neuronxcc-x" / "MODULE_1+ab" / "model.neff") << "12345";
  std::filesystem::create_directories(dir / "not-a-key");
  const auto entries = list_keys(loc);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].key == key.hex);
  REQUIRE(entries[0].bytes);
  CHECK(*entries[0].bytes == 5);
  CHECK(entries[0].last_use == "2026-11-24T11:00:00Z");
  CHECK(entries[0].inputs.at(0).at("name") == "train.tp");
  CHECK_FALSE(entries[0].warm);
  // Graphs under cache.url are not measured.
  CHECK_FALSE(list_keys(CacheLocation{dir.path(), "s3://b/c"})[0].bytes);

  REQUIRE(remove_key(loc, key.hex));
  CHECK(list_keys(loc).empty());
  CHECK_FALSE(std::filesystem::exists(key_dir(loc, key.hex)));
  CHECK_FALSE(remove_key(loc, "../escape"));
}

TEST_CASE("cache_store: the key's lock is exclusive") {
  test::ScratchDir dir;
  const CacheLocation loc{dir / "cache", ""};
  auto lock = lock_key(loc, "0123456789abcdef");
  REQUIRE(lock);
  const auto path = loc.dir / ".0123456789abcdef.lock";
  REQUIRE(std::filesystem::exists(path));
  // flock is per open file description: a second open sees it held.
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) != 0);
  { auto moved = std::move(*lock); }
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  ::close(fd);
}
