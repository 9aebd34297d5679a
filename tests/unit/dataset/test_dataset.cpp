#include "trnslurm/dataset/dataset.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "dataset_test_util.hpp"

using namespace trnslurm;
using trnslurm::test::datasets;
using trnslurm::test::expected;

namespace {

std::string fixture_path(const std::string& name) {
  if (name == "list_file" || name == "fixed_file" || name == "list_stream") {
    return (datasets() / "arrow" / (name + ".arrow")).string();
  }
  if (name == "hf_dict_validation") return (datasets() / "hf_dict").string();
  if (name.starts_with("megatron_")) return (datasets() / "megatron" / ("tokens_" + name.substr(9))).string();
  return (datasets() / name).string();
}

bool has_warning(const DatasetCount& c, const std::string& needle) {
  for (const auto& w : c.warnings) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("dataset: every fixture counts as its independent writer says") {
  for (const auto& [name, e] : expected().items()) {
    DYNAMIC_SECTION(name) {
      for (const bool verify : {false, true}) {
        DatasetRequest r;
        r.path = fixture_path(name);
        r.verify = verify;
        if (name == "hf_dict_validation") r.split = "validation";
        if (e.contains("seq_len") && !e.value("ragged", false)) r.seq_len = e["seq_len"].get<std::uint64_t>();
        const auto c = count_dataset(r);
        INFO(name << (verify ? " --verify" : "") << ": " << (c ? "" : to_string(c.error())));
        REQUIRE(c.has_value());
        CHECK(to_string(c->format) == to_string(*parse_dataset_format(e["format"] == "hf_dict" ? "hf-dict"
                                                                      : e["format"] == "arrow_file"
                                                                          ? "arrow"
                                                                          : e["format"].get<std::string>())));
        CHECK(c->rows == e["rows"].get<std::uint64_t>());
        CHECK(c->files == e["files"].get<std::uint64_t>());
        REQUIRE(c->tokens.has_value());
        CHECK(*c->tokens == e["tokens"].get<std::uint64_t>());
        if (e.contains("stale")) {
          CHECK(has_warning(*c, "says " + std::to_string(e["stale"].get<int>()) + " examples"));
        }
      }
    }
  }
}

TEST_CASE("dataset: state.json decides the shards, not the directory listing") {
  // hf_list holds a fourth, stray shard of 50 rows that state.json does not list.
  const auto c = count_dataset({.path = datasets() / "hf_list"});
  REQUIRE(c.has_value());
  CHECK(c->files == 3);
  CHECK(c->rows == expected()["hf_list"]["rows"].get<std::uint64_t>());
  CHECK(has_warning(
      *c, "dataset_info.json: says 1000 examples for split 'train' but the Arrow files hold 62 rows"));
}

TEST_CASE("dataset: --verify with seq_len names the first row of the wrong length") {
  DatasetRequest r{.path = datasets() / "hf_ragged", .verify = true, .seq_len = 8};
  const auto c = count_dataset(r);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what.find("tokens in column 'input_ids', not seq_len 8") != std::string::npos);
  CHECK(c.error().where.find("hf_ragged/data-00000-of-00002.arrow:offset ") != std::string::npos);
  CHECK_FALSE(c.error().hint.empty());

  // Without --verify the totals already show that rows are not all seq_len long: a warning.
  r.verify = false;
  const auto w = count_dataset(r);
  REQUIRE(w.has_value());
  CHECK(has_warning(*w, "some rows are not seq_len long"));
  CHECK(*w->tokens == expected()["hf_ragged"]["tokens"].get<std::uint64_t>());

  // Without seq_len, --verify counts the tokens from the offsets.
  r.verify = true;
  r.seq_len.reset();
  const auto v = count_dataset(r);
  REQUIRE(v.has_value());
  CHECK(*v->tokens == expected()["hf_ragged"]["tokens"].get<std::uint64_t>());
}

TEST_CASE("dataset: a FixedSizeList column must hold seq_len tokens per row") {
  DatasetRequest r{.path = datasets() / "hf_fixed", .seq_len = 16};
  REQUIRE(count_dataset(r).has_value());
  r.seq_len = 2048;
  const auto c = count_dataset(r);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what ==
        "column 'input_ids' is FixedSizeList<Int32>: every row holds 16 tokens, not seq_len 2048");
  CHECK(c.error().where == (datasets() / "hf_fixed" / "data-00000-of-00002.arrow").string() + ":offset 0");

  // In the file format the schema is read from the footer; the error names the footer's offset.
  const auto f = count_dataset({.path = datasets() / "arrow" / "fixed_file.arrow", .seq_len = 5});
  REQUIRE_FALSE(f.has_value());
  CHECK(f.error().where.starts_with((datasets() / "arrow" / "fixed_file.arrow").string() + ":offset "));
  CHECK(f.error().where != (datasets() / "arrow" / "fixed_file.arrow").string() + ":offset 0");
}

TEST_CASE("dataset: a DatasetDict counts the split asked for, train by default") {
  const auto train = count_dataset({.path = datasets() / "hf_dict"});
  REQUIRE(train.has_value());
  CHECK(train->format == DatasetFormat::hf_dict);
  CHECK(train->rows == expected()["hf_dict"]["rows"].get<std::uint64_t>());
  const auto val = count_dataset({.path = datasets() / "hf_dict", .split = "validation"});
  REQUIRE(val.has_value());
  CHECK(val->rows == expected()["hf_dict_validation"]["rows"].get<std::uint64_t>());
  const auto none = count_dataset({.path = datasets() / "hf_dict", .split = "test"});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().what == "no split 'test' in this DatasetDict (splits: train, validation)");
  CHECK(none.error().where == (datasets() / "hf_dict" / "dataset_dict.json").string());
  // A split that names a directory elsewhere is refused even if dataset_dict.json lists it.
  const auto evil = count_dataset({.path = datasets() / "hf_dict", .split = "../hf_list"});
  CHECK_FALSE(evil.has_value());
}

TEST_CASE("dataset: a column that is not the token column gives a warning, --verify an error") {
  DatasetRequest r{.path = datasets() / "hf_list", .token_column = "label"};
  const auto c = count_dataset(r);
  REQUIRE(c.has_value());
  CHECK_FALSE(c->tokens.has_value());
  CHECK(has_warning(*c, "column 'label' is Int32, not a list of tokens: tokens not counted"));
  r.token_column = "nope";
  const auto n = count_dataset(r);
  REQUIRE(n.has_value());
  CHECK(has_warning(*n, "no column 'nope' in the schema"));
  r.verify = true;
  const auto v = count_dataset(r);
  REQUIRE_FALSE(v.has_value());
  CHECK(v.error().what.find("--verify cannot check") != std::string::npos);
}

TEST_CASE("dataset: formats are detected from the path, and can be forced") {
  CHECK(count_dataset({.path = datasets() / "hf_legacy"})->format == DatasetFormat::hf);
  CHECK(count_dataset({.path = datasets() / "arrow" / "list_stream.arrow"})->format ==
        DatasetFormat::arrow_file);
  const auto prefix = datasets() / "megatron" / "tokens_u16";
  for (const std::filesystem::path& p :
       {prefix, prefix.parent_path() / "tokens_u16.idx", prefix.parent_path() / "tokens_u16.bin"}) {
    const auto c = count_dataset({.path = p});
    REQUIRE(c.has_value());
    CHECK(c->format == DatasetFormat::megatron);
    CHECK(c->rows == expected()["megatron_u16"]["rows"].get<std::uint64_t>());
  }
  // A forced format that does not match is an error about the file, not a crash.
  const auto wrong = count_dataset({.path = prefix.string() + ".idx", .format = DatasetFormat::arrow_file});
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().where.starts_with(prefix.string() + ".idx:offset "));
  const auto missing = count_dataset({.path = datasets() / "no_such_dataset"});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().what == "no such dataset");
  const auto not_dataset = count_dataset({.path = datasets() / "megatron"});
  REQUIRE_FALSE(not_dataset.has_value());
  CHECK(not_dataset.error().what.starts_with("no dataset found in this directory"));
}

TEST_CASE("dataset: format names round-trip") {
  for (const auto f : {DatasetFormat::automatic, DatasetFormat::hf, DatasetFormat::hf_dict,
                       DatasetFormat::megatron, DatasetFormat::arrow_file}) {
    CHECK(parse_dataset_format(to_string(f)) == f);
  }
  CHECK_FALSE(parse_dataset_format("parquet").has_value());
  CHECK_FALSE(parse_dataset_format("HF").has_value());
  // The list a recipe is checked against names exactly these formats.
  REQUIRE(dataset_format_names().size() == 5);
  for (const auto& name : dataset_format_names()) CHECK(to_string(*parse_dataset_format(name)) == name);
}

TEST_CASE("dataset: requests that cannot be right are refused") {
  CHECK_FALSE(count_dataset({}).has_value());
  CHECK(count_dataset({.path = datasets() / "hf_list", .seq_len = 0}).error().what ==
        "seq_len must be positive");
}
