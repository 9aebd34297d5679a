#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <fstream>

#include "dataset_test_util.hpp"
#include "trnslurm/dataset/dataset.hpp"

using namespace trnslurm;
using trnslurm::test::datasets;

namespace {

// A save_to_disk directory of n copies of one fixture shard (7 rows of 8 tokens), listed in state.json.
void make_hf_dir(const std::filesystem::path& dir, int n) {
  const auto shard = datasets() / "hf_list" / "data-00002-of-00003.arrow";
  nlohmann::json files = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    const auto name = fmt::format("data-{:05}-of-{:05}.arrow", i, n);
    std::filesystem::copy_file(shard, dir / name);
    files.push_back({{"filename", name}});
  }
  std::ofstream(dir / "state.json") << nlohmann::json{{"_data_files", files}, {"_split", "train"}}.dump();
}

}  // namespace

TEST_CASE("dataset shards: a dataset of 2,000 shards counts every shard once, in state.json's order") {
  trnslurm::test::ScratchDir dir;
  make_hf_dir(dir.path(), 2000);
  const auto c = count_dataset({.path = dir.path(), .verify = true, .seq_len = 8});
  REQUIRE(c.has_value());
  CHECK(c->files == 2000);
  CHECK(c->rows == 2000 * 7);
  CHECK(c->tokens == 2000 * 7 * 8);
  CHECK(c->warnings.empty());

  // One damaged shard among them is named.
  std::filesystem::resize_file(dir.path() / "data-01234-of-02000.arrow", 100);
  const auto bad = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().where.starts_with((dir.path() / "data-01234-of-02000.arrow").string() + ":offset "));
}

TEST_CASE("dataset shards: read by 1 or 16 readers at once, the same count and the first listed failure") {
  // More shards than one chunk of concurrent reads (1,024), so the chunks' boundaries are crossed.
  trnslurm::test::ScratchDir dir;
  make_hf_dir(dir.path(), 2100);
  for (const unsigned readers : {1u, 3u, 16u}) {
    CAPTURE(readers);
    const auto c = count_dataset({.path = dir.path(), .verify = true, .seq_len = 8, .readers = readers});
    REQUIRE(c.has_value());
    CHECK(c->files == 2100);
    CHECK(c->rows == 2100 * 7);
    CHECK(c->tokens == 2100 * 7 * 8);
  }
  // Two damaged shards, in two chunks, the later one listed last: whichever reader finishes
  // first, the error names the first listed, as a reader going through the list in turn would.
  std::filesystem::resize_file(dir.path() / "data-02050-of-02100.arrow", 10);
  std::filesystem::resize_file(dir.path() / "data-01500-of-02100.arrow", 100);
  std::filesystem::resize_file(dir.path() / "data-01900-of-02100.arrow", 100);
  for (const unsigned readers : {1u, 16u}) {
    CAPTURE(readers);
    const auto bad = count_dataset({.path = dir.path(), .readers = readers});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().where.starts_with((dir.path() / "data-01500-of-02100.arrow").string() + ":offset "));
  }
  // A schema that differs in the middle of a chunk, after a shard that cannot be read at all.
  std::filesystem::remove(dir.path() / "data-00700-of-02100.arrow");
  std::filesystem::copy_file(datasets() / "hf_fixed" / "data-00000-of-00002.arrow",
                             dir.path() / "data-00700-of-02100.arrow");
  std::filesystem::remove(dir.path() / "data-00800-of-02100.arrow");
  const auto mixed = count_dataset({.path = dir.path(), .readers = 16});
  REQUIRE_FALSE(mixed.has_value());
  CHECK(mixed.error().what.starts_with("column 'input_ids' is FixedSizeList<Int32> here but List<Int32>"));
  CHECK(mixed.error().where == (dir.path() / "data-00700-of-02100.arrow").string() + ":offset 0");
}

TEST_CASE("dataset shards: state.json must name files inside the dataset, each once") {
  trnslurm::test::ScratchDir dir;
  make_hf_dir(dir.path(), 2);
  const auto write_state = [&](const nlohmann::json& files) {
    std::ofstream(dir.path() / "state.json") << nlohmann::json{{"_data_files", files}}.dump();
  };
  write_state({{{"filename", "../../etc/passwd"}}});
  auto c = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what.find("is not a file name in this directory") != std::string::npos);

  write_state({{{"filename", "data-00000-of-00002.arrow"}}, {{"filename", "data-00000-of-00002.arrow"}}});
  c = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "shard 'data-00000-of-00002.arrow' is listed twice in '_data_files'");

  write_state({{{"filename", "data-00005-of-00002.arrow"}}});
  c = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().where == (dir.path() / "data-00005-of-00002.arrow").string());

  std::ofstream(dir.path() / "state.json") << "{\"_data_files\": [ {\"filename\": ";
  c = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().where.starts_with((dir.path() / "state.json").string() + ":offset "));

  // A shard whose schema differs from the first one's.
  std::filesystem::copy_file(datasets() / "hf_fixed" / "data-00000-of-00002.arrow",
                             dir.path() / "fixed.arrow");
  write_state({{{"filename", "data-00000-of-00002.arrow"}}, {{"filename", "fixed.arrow"}}});
  c = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "column 'input_ids' is FixedSizeList<Int32> here but List<Int32> in " +
                              (dir.path() / "data-00000-of-00002.arrow").string());
}

TEST_CASE("dataset shards: a hostile 64 MiB state.json is refused before it fills memory") {
  // 21 million empty arrays: within the 64 MiB size limit, gigabytes once parsed into values.
  trnslurm::test::ScratchDir dir;
  make_hf_dir(dir.path(), 1);
  {
    std::ofstream out(dir.path() / "state.json", std::ios::binary);
    out << R"({"_data_files": [)";
    const std::string chunk = [] {
      std::string c;
      for (int i = 0; i < 4096; ++i) c += "[],";
      return c;
    }();
    for (std::size_t written = 0; written < (60u << 20); written += chunk.size()) out << chunk;
    out << "[]]}";
  }
  const auto c = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "more than 1000000 JSON values: not read into memory");
  CHECK(c.error().where == (dir.path() / "state.json").string());
}
