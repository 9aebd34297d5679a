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

// Issue 31: state.json is read in one pass that keeps the split and the shard names only. What
// it keeps and refuses must be what a parsed document gives.
namespace {

struct StateDir {
  trnslurm::test::ScratchDir dir;
  StateDir() { make_hf_dir(dir.path(), 2); }
  Result<DatasetCount> count(const std::string& state) const {
    std::ofstream(dir.path() / "state.json", std::ios::binary | std::ios::trunc) << state;
    return count_dataset({.path = dir.path()});
  }
  std::string refusal(const std::string& state) const {
    const auto c = count(state);
    return c ? std::string("(counted)") : c.error().what;
  }
};

constexpr const char* d0 = R"({"filename": "data-00000-of-00002.arrow"})";
constexpr const char* d1 = R"({"filename": "data-00001-of-00002.arrow"})";

}  // namespace

TEST_CASE("dataset shards: state.json entries keep their filename, whatever else they hold") {
  const StateDir s;
  // dataset_info.json's count for the split named in state.json is compared: a warning shows
  // which split was read.
  std::ofstream(s.dir.path() / "dataset_info.json")
      << R"({"splits": {"train": {"num_examples": 14}, "validation": {"num_examples": 99}}})";
  // Extra keys, nested, before and after "filename"; a "filename" nested deeper is not the
  // entry's; "_split" after the lists; other members holding the keys looked for.
  const auto c = s.count(
      R"({"_format_kwargs": {"_split": "train", "_data_files": 5, "filename": "x"},
          "_data_files": [{"meta": {"filename": "nope", "list": [{"filename": 1}]}, "filename": "data-00000-of-00002.arrow",
                           "after": [[{"filename": null}]]},
                          {"x": 1, "filename": "data-00001-of-00002.arrow"}],
          "_fingerprint": "f", "_indices_data_files": null, "_split": "validation"})");
  REQUIRE(c.has_value());
  CHECK(c->files == 2);
  CHECK(c->rows == 14);
  REQUIRE(c->warnings.size() == 1);
  CHECK(c->warnings[0].find("says 99 examples for split 'validation'") != std::string::npos);

  // Where a key is repeated the last one counts, as in a parsed document.
  CHECK(
      s.refusal(
          R"({"_data_files": 5, "_data_files": [{"filename": null, "filename": "data-00000-of-00002.arrow"}]})") ==
      "(counted)");
  CHECK(s.refusal(R"({"_data_files": [{"filename": "data-00000-of-00002.arrow"}], "_data_files": {}})") ==
        "'_data_files' is not a list");
  CHECK(s.refusal(R"({"_data_files": [{"filename": "data-00000-of-00002.arrow", "filename": 3}]})") ==
        "an entry of '_data_files' has no \"filename\" string");
  const auto split =
      s.count(fmt::format(R"({{"_split": "validation", "_data_files": [{}, {}], "_split": 3}})", d0, d1));
  REQUIRE(split.has_value());
  CHECK(split->warnings.empty());  // the split asked for (train) is the one compared
}

TEST_CASE("dataset shards: state.json refusals, in a parsed document's order") {
  const StateDir s;
  const std::string no_filename = "an entry of '_data_files' has no \"filename\" string";
  CHECK(s.refusal(fmt::format("[{{\"_data_files\": [{}]}}]", d0)) == "not a JSON object");
  CHECK(s.refusal("\"state\"") == "not a JSON object");
  CHECK(s.refusal(R"({"_data_files": {"filename": "data-00000-of-00002.arrow"}})") ==
        "'_data_files' is not a list");
  CHECK(s.refusal(R"({"_data_files": "data-00000-of-00002.arrow"})") == "'_data_files' is not a list");
  CHECK(s.refusal(R"({"_data_files": null})") == "state.json lists no data files");
  CHECK(s.refusal(R"({"_data_files": []})") == "state.json lists no data files");
  CHECK(s.refusal(R"({"_fingerprint": "f"})") == "state.json lists no data files");
  CHECK(s.refusal(R"({"_data_files": [{"meta": {"filename": "data-00000-of-00002.arrow"}}]})") ==
        no_filename);
  CHECK(s.refusal(R"({"_data_files": [{"filename": 7}]})") == no_filename);
  CHECK(s.refusal(R"({"_data_files": [{"filename": ["data-00000-of-00002.arrow"]}]})") == no_filename);
  CHECK(s.refusal(R"({"_data_files": [["data-00000-of-00002.arrow"]]})") == no_filename);
  CHECK(s.refusal(fmt::format(R"({{"_data_files": [{}, "data-00001-of-00002.arrow"]}})", d0)) == no_filename);
  CHECK(s.refusal(R"({"_data_files": [{"filename": ".."}]})") ==
        "shard name '..' in '_data_files' is not a file name in this directory");
  // The first entry in the list that is wrong is the one named: a repeat before a bad entry...
  CHECK(s.refusal(fmt::format(R"({{"_data_files": [{}, {}, {}, {}, 5]}})", d0, d1, d1, d0)) ==
        "shard 'data-00001-of-00002.arrow' is listed twice in '_data_files'");
  // ...and a bad entry before a repeat.
  CHECK(s.refusal(fmt::format(R"({{"_data_files": [{}, {{"filename": "a/b"}}, {}]}})", d0, d0)) ==
        "shard name 'a/b' in '_data_files' is not a file name in this directory");
  // The indices mapping is looked at once the data files are counted.
  CHECK(s.refusal(fmt::format(R"({{"_indices_data_files": 1, "_data_files": [{}]}})", d0)) ==
        "'_indices_data_files' is not a list");
  CHECK(s.refusal(fmt::format(R"({{"_indices_data_files": 1, "_data_files": [{}, {{}}]}})", d0)) ==
        no_filename);
  CHECK(s.refusal(fmt::format(R"({{"_indices_data_files": [{}, {}], "_data_files": [{}]}})", d1, d1, d0)) ==
        "shard 'data-00001-of-00002.arrow' is listed twice in '_indices_data_files'");
}

TEST_CASE("dataset shards: state.json is read past its first chunk, and checked as a file first") {
  const StateDir s;
  // A syntax error a megabyte in: its offset counts every byte before it.
  const std::string padding(1u << 20, 'x');
  const std::string broken = fmt::format(R"({{"_fingerprint": "{}", "_data_files": [{}], }})", padding, d0);
  const auto c = s.count(broken);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what.starts_with("not valid JSON: "));
  CHECK(c.error().where ==
        fmt::format("{}:offset {}", (s.dir.path() / "state.json").string(), broken.size() - 1));
  const auto padded =
      s.count(fmt::format(R"({{"_fingerprint": "{}", "_data_files": [{}, {}]}})", padding, d0, d1));
  REQUIRE(padded.has_value());
  CHECK(padded->rows == 14);

  // A string or number past 1 MiB is refused where it starts (the padding above is 1 MiB exactly):
  // the parser would hold it whole, twice.
  const std::string state_json = (s.dir.path() / "state.json").string();
  const std::string too_long = "a JSON string or number of more than 1048576 bytes: not read into memory";
  const auto string = s.count(fmt::format(R"({{"_data_files": [{}], "_fingerprint": "{}x"}})", d0, padding));
  REQUIRE_FALSE(string.has_value());
  CHECK(string.error().what == too_long);
  CHECK(string.error().where == fmt::format("{}:offset {}", state_json, 77));
  const auto escaped = s.count(fmt::format(R"({{"_split": "{}\"ab"}})", padding.substr(2)));
  REQUIRE_FALSE(escaped.has_value());
  CHECK(escaped.error().what == too_long);
  CHECK(escaped.error().where == fmt::format("{}:offset {}", state_json, 11));
  const auto number =
      s.count(fmt::format(R"({{"_data_files": [{}], "_n": 1{}}})", d0, std::string(1u << 20, '0')));
  REQUIRE_FALSE(number.has_value());
  CHECK(number.error().what == too_long);
  CHECK(number.error().where == fmt::format("{}:offset {}", state_json, 67));

  std::filesystem::remove(s.dir.path() / "state.json");
  std::filesystem::create_directory(s.dir.path() / "state.json");
  const auto dir = count_dataset({.path = s.dir.path(), .format = DatasetFormat::hf});
  REQUIRE_FALSE(dir.has_value());
  CHECK(dir.error().what == "not a regular file");
  std::filesystem::remove(s.dir.path() / "state.json");

  {
    std::ofstream big(s.dir.path() / "state.json", std::ios::binary);
    big << fmt::format(R"({{"_data_files": [{}], "_fingerprint": ")", d0);
  }
  std::filesystem::resize_file(s.dir.path() / "state.json", (64u << 20) + 1);
  const auto large = count_dataset({.path = s.dir.path()});
  REQUIRE_FALSE(large.has_value());
  CHECK(large.error().what == "file of 67108865 bytes is larger than the 67108864 bytes accepted");
}
