// Truncated and corrupted files: every one must give an Error naming the file and a byte offset,
// never a crash, a hang or a wrong count. Runs under the asan preset too.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "dataset_test_util.hpp"
#include "trnslurm/dataset/dataset.hpp"

using namespace trnslurm;
using trnslurm::test::datasets;
using trnslurm::test::expected;

namespace {

struct Sample {
  std::filesystem::path source;
  std::string file_name;  // as written in the scratch directory
  std::uint64_t rows;
  bool megatron;
};

std::vector<Sample> samples() {
  return {
      {datasets() / "hf_list" / "data-00002-of-00003.arrow", "shard.arrow", 7, false},
      {datasets() / "arrow" / "fixed_file.arrow", "file.arrow",
       expected()["fixed_file"]["rows"].get<std::uint64_t>(), false},
      {datasets() / "hf_empty" / "data-00000-of-00001.arrow", "empty.arrow", 0, false},
      {datasets() / "megatron" / "tokens_i16.idx", "tokens.idx",
       expected()["megatron_i16"]["rows"].get<std::uint64_t>(), true},
  };
}

Result<DatasetCount> count(const std::filesystem::path& file, bool megatron, bool verify) {
  DatasetRequest r{.path = file,
                   .format = megatron ? DatasetFormat::megatron : DatasetFormat::arrow_file,
                   .verify = verify};
  return count_dataset(r);
}

}  // namespace

TEST_CASE("dataset corrupt: truncation at every byte offset is an error naming file and offset") {
  trnslurm::test::ScratchDir dir;
  for (const auto& s : samples()) {
    const auto bytes = trnslurm::test::read_bytes(s.source);
    const auto target = dir.path() / s.file_name;
    INFO(s.source.string() << " (" << bytes.size() << " bytes)");
    REQUIRE(bytes.size() > 16);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      trnslurm::test::write_bytes(target, bytes.data(), cut);
      const auto c = count(target, s.megatron, true);
      INFO("cut at " << cut);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().where.starts_with(target.string()));
      // Every truncation is reported at a byte offset (an empty file at offset 0).
      CHECK(c.error().where.find(":offset ") != std::string::npos);
    }
    trnslurm::test::write_bytes(target, bytes.data(), bytes.size());
    const auto whole = count(target, s.megatron, true);
    REQUIRE(whole.has_value());
    CHECK(whole->rows == s.rows);
  }
}

TEST_CASE("dataset corrupt: random byte flips give a count or an error, never a crash") {
  trnslurm::test::ScratchDir dir;
  std::mt19937_64 rng(20261122);
  std::size_t errors = 0, counted = 0;
  for (const auto& s : samples()) {
    const auto bytes = trnslurm::test::read_bytes(s.source);
    const auto target = dir.path() / s.file_name;
    for (int round = 0; round < 400; ++round) {
      auto copy = bytes;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const auto at = static_cast<std::size_t>(rng() % copy.size());
        copy[at] = static_cast<char>(copy[at] ^ static_cast<char>(1 + rng() % 255));
      }
      trnslurm::test::write_bytes(target, copy.data(), copy.size());
      for (const bool verify : {false, true}) {
        const auto c = count(target, s.megatron, verify);
        if (c) {
          ++counted;
          continue;
        }
        ++errors;
        INFO(s.source.string() << " round " << round << ": " << to_string(c.error()));
        CHECK(c.error().where.starts_with(target.string()));
        CHECK_FALSE(c.error().what.empty());
      }
    }
  }
  // Most flips land in metadata of these small files and must be caught.
  CHECK(errors > counted / 4);
}

TEST_CASE("dataset corrupt: a metadata length larger than the file is refused before allocating") {
  trnslurm::test::ScratchDir dir;
  auto bytes = trnslurm::test::read_bytes(datasets() / "hf_list" / "data-00002-of-00003.arrow");
  // The first message's metadata length: 0x7fffffff (2 GiB) in a file of a few kilobytes.
  bytes[4] = static_cast<char>(0xff);
  bytes[5] = static_cast<char>(0xff);
  bytes[6] = static_cast<char>(0xff);
  bytes[7] = static_cast<char>(0x7f);
  const auto target = dir.path() / "huge.arrow";
  trnslurm::test::write_bytes(target, bytes.data(), bytes.size());
  const auto c = count(target, false, false);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "invalid Arrow message metadata length 2147483647");
  CHECK(c.error().where == target.string() + ":offset 0");
}

TEST_CASE("dataset corrupt: a stream cut exactly between two record batches is not a smaller dataset") {
  trnslurm::test::ScratchDir dir;
  const auto bytes = trnslurm::test::read_bytes(datasets() / "hf_list" / "data-00000-of-00003.arrow");
  // Dropping only the end-of-stream marker leaves every message whole.
  const auto target = dir.path() / "cut.arrow";
  trnslurm::test::write_bytes(target, bytes.data(), bytes.size() - 8);
  const auto c = count(target, false, false);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().where == target.string() + ":offset " + std::to_string(bytes.size() - 8));
  CHECK(c.error().what.find("end-of-stream marker") != std::string::npos);
}

TEST_CASE("dataset corrupt: a FIFO or a directory given as a shard is refused without blocking") {
  trnslurm::test::ScratchDir dir;
  const auto fifo = dir.path() / "fifo.arrow";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto c = count(fifo, false, false);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "not a regular file");
  const auto d = count(dir.path(), false, false);
  CHECK_FALSE(d.has_value());
}
