#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "dataset/megatron_idx.hpp"
#include "dataset_test_util.hpp"
#include "trnslurm/dataset/dataset.hpp"

using namespace trnslurm;
using trnslurm::test::datasets;
using trnslurm::test::expected;

namespace {

Result<DatasetCount> count_idx(const std::string& name, bool verify = false) {
  return count_dataset({.path = datasets() / "megatron" / (name + ".idx"), .verify = verify});
}

std::string idx_where(const std::string& name, std::uint64_t offset) {
  return (datasets() / "megatron" / (name + ".idx")).string() + ":offset " + std::to_string(offset);
}

}  // namespace

TEST_CASE("megatron: sequences and tokens of every integer dtype") {
  for (const char* dtype : {"u8", "i8", "i16", "i32", "i64", "u16"}) {
    INFO(dtype);
    const auto& e = expected()[std::string("megatron_") + dtype];
    for (const bool verify : {false, true}) {
      const auto c = count_idx(std::string("tokens_") + dtype, verify);
      REQUIRE(c.has_value());
      CHECK(c->format == DatasetFormat::megatron);
      CHECK(c->rows == e["rows"].get<std::uint64_t>());
      CHECK(c->tokens == e["tokens"].get<std::uint64_t>());
      CHECK(c->files == 1);
      CHECK(c->warnings.empty());
    }
  }
}

TEST_CASE("megatron: broken indexes are errors at the offending byte") {
  struct Case {
    const char* name;
    std::uint64_t offset;
    const char* what;
  };
  // 3 sequences: sizes at 34, pointers at 46, document indices at 70.
  const Case cases[] = {
      {"bad_magic", 0, "not a Megatron indexed dataset: the file does not start with MMIDIDX"},
      {"bad_version", 9, "unsupported MMIDIDX version 2"},
      {"float_dtype", 17, "dtype code 6 is not an integer token type"},
      {"count_mismatch", 18,
       "header says 4 sequences and 2 documents, which needs 98 bytes, but the file has 86"},
      {"truncated", 18, "header says 3 sequences and 2 documents, which needs 86 bytes, but the file has 60"},
      {"negative_size", 38, "sequence 1 has length -5"},
      {"bad_documents", 78, "last document index is 2, not the sequence count 3"},
  };
  for (const auto& k : cases) {
    INFO(k.name);
    const auto c = count_idx(k.name);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what == k.what);
    CHECK(c.error().where == idx_where(k.name, k.offset));
    CHECK_FALSE(c.error().hint.empty());
  }
  const auto bin = count_idx("short_bin");
  REQUIRE_FALSE(bin.has_value());
  CHECK(bin.error().where == (datasets() / "megatron" / "short_bin.bin").string() + ":offset 7");
  CHECK(bin.error().what == "the .bin holds 7 bytes but the .idx counts 60 tokens of 2 bytes (120 bytes)");
}

TEST_CASE("megatron: a missing .bin is a warning, the .idx still counts") {
  trnslurm::test::ScratchDir dir;
  std::filesystem::copy_file(datasets() / "megatron" / "tokens_i32.idx", dir.path() / "only.idx");
  const auto c = count_dataset({.path = dir.path() / "only"});
  REQUIRE(c.has_value());
  CHECK(c->tokens == expected()["megatron_i32"]["tokens"].get<std::uint64_t>());
  REQUIRE(c->warnings.size() == 1);
  CHECK(c->warnings[0].find("only.bin: not found") != std::string::npos);
}

TEST_CASE("megatron: --verify checks the pointers and document indices the count does not read") {
  trnslurm::test::ScratchDir dir;
  auto bytes = trnslurm::test::read_bytes(datasets() / "megatron" / "tokens_u16.idx");
  std::filesystem::copy_file(datasets() / "megatron" / "tokens_u16.bin", dir.path() / "x.bin");
  std::uint64_t S = 0;
  std::memcpy(&S, bytes.data() + 18, 8);
  REQUIRE(S >= 3);

  // The second sequence's pointer off by two bytes.
  auto pointers = bytes;
  const std::size_t p1 = 34 + 4 * S + 8;
  pointers[p1] = static_cast<char>(pointers[p1] + 2);
  trnslurm::test::write_bytes(dir.path() / "x.idx", pointers.data(), pointers.size());
  REQUIRE(count_dataset({.path = dir.path() / "x"}).has_value());
  const auto bad = count_dataset({.path = dir.path() / "x", .verify = true});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().where == (dir.path() / "x.idx").string() + ":offset " + std::to_string(p1));

  // A document index that goes backwards (second entry larger than the last).
  auto docs = bytes;
  std::uint64_t D = 0;
  std::memcpy(&D, bytes.data() + 26, 8);
  REQUIRE(D >= 2);
  const std::size_t d0 = 34 + 12 * S;
  if (D >= 3) {
    const std::int64_t big = static_cast<std::int64_t>(S) + 1;
    std::memcpy(docs.data() + d0 + 8, &big, 8);
  } else {
    const std::int64_t neg = -1;
    std::memcpy(docs.data() + d0 + 8 * (D - 1), &neg, 8);
  }
  trnslurm::test::write_bytes(dir.path() / "x.idx", docs.data(), docs.size());
  const auto d = count_dataset({.path = dir.path() / "x", .verify = true});
  REQUIRE_FALSE(d.has_value());
  CHECK(d.error().where.starts_with((dir.path() / "x.idx").string() + ":offset "));
}

TEST_CASE("megatron: an index without the .idx extension is found by its magic") {
  trnslurm::test::ScratchDir dir;
  std::filesystem::copy_file(datasets() / "megatron" / "tokens_u8.idx", dir.path() / "index");
  std::filesystem::copy_file(datasets() / "megatron" / "tokens_u8.bin", dir.path() / "index.bin");
  const auto c = count_dataset({.path = dir.path() / "index"});
  REQUIRE(c.has_value());
  CHECK(c->format == DatasetFormat::megatron);
  CHECK(c->tokens == expected()["megatron_u8"]["tokens"].get<std::uint64_t>());
  CHECK(c->warnings.empty());
}

TEST_CASE("megatron: the .bin size an .idx implies never wraps") {
  // int64 tokens: 2^61 of them are 2^64 bytes, which an .idx of about 12 GiB (2^30 sequences of
  // 2^31 - 1 tokens) can claim; the product wrapped to a small size a .bin could match.
  using trnslurm::dataset::token_bytes;
  CHECK(token_bytes(1000, 5) == 8000u);
  CHECK(token_bytes((std::uint64_t{1} << 61) - 1, 5) == std::uint64_t{0} - 8);
  CHECK_FALSE(token_bytes(std::uint64_t{1} << 61, 5));
  CHECK_FALSE(token_bytes((std::uint64_t{1} << 61) + 125, 5));  // wrapped to 1000 bytes before
  CHECK(token_bytes(std::uint64_t{1} << 63, 1) == std::uint64_t{1} << 63);
  CHECK_FALSE(token_bytes(std::uint64_t{1} << 63, 3));
  CHECK_FALSE(token_bytes(10, 6));  // a float dtype: no tokens
}
