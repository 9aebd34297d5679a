// The token-count cache (dataset/token_count): the key changes with anything the count depends
// on, and the reader believes only a file for this corpus.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <string>

#include "fixtures.hpp"
#include "trnslurm/dataset/token_count.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"

using namespace trnslurm;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

struct Corpus {
  test::ScratchDir dir;
  fs::path data = dir / "data";
  fs::path tokenizer = dir / "tok";
  fs::path runs = dir / "runs";
  Corpus() {
    write(data / "a.jsonl", "{\"text\": \"hello\"}\n");
    write(data / "sub" / "b.jsonl", "{\"text\": \"world of text\"}\n");
    write(data / ".cache" / "junk", "ignored");
    write(tokenizer / "tokenizer.json", "{\"model\": 1}");
  }
  std::string identity() const {
    auto c = scan_text_corpus(data);
    REQUIRE(c.has_value());
    auto d = tokenizer_digest(tokenizer);
    REQUIRE(d.has_value());
    return token_count_identity(*c, tokenizer, *d);
  }
};

}  // namespace

TEST_CASE("token_count: the corpus is every file but hidden ones, sorted") {
  Corpus c;
  auto corpus = scan_text_corpus(c.data);
  REQUIRE(corpus.has_value());
  REQUIRE(corpus->files.size() == 2);
  CHECK(corpus->files[0].relative == "a.jsonl");
  CHECK(corpus->files[1].relative == "sub/b.jsonl");
  CHECK(corpus->bytes == 18 + 26);
  CHECK_FALSE(scan_text_corpus(c.dir / "nope").has_value());
  fs::create_directories(c.dir / "empty");
  CHECK_FALSE(scan_text_corpus(c.dir / "empty").has_value());
  CHECK_FALSE(tokenizer_digest(c.data).has_value());  // no tokenizer files there
}

TEST_CASE("token_count: the key follows the files and the tokenizer") {
  Corpus c;
  const auto first = c.identity();
  CHECK(first == c.identity());
  const auto file = token_count_file(c.runs, first);
  CHECK(file.parent_path() == c.runs / "token-counts");
  CHECK(file.filename().string().size() == 16 + 5);
  // Another tokenizer config, a grown file, a new file: each a new key.
  write(c.tokenizer / "tokenizer_config.json", "{\"add_bos_token\": true}");
  const auto second = c.identity();
  CHECK(token_count_file(c.runs, second) != file);
  write(c.data / "a.jsonl", "{\"text\": \"hello again\"}\n");
  const auto third = c.identity();
  CHECK(third != second);
  write(c.data / "c.jsonl", "{\"text\": \"more\"}\n");
  CHECK(c.identity() != third);
}

TEST_CASE("token_count: the reader believes a count for this corpus only") {
  Corpus c;
  auto corpus = scan_text_corpus(c.data);
  REQUIRE(corpus.has_value());
  const auto file = token_count_file(c.runs, c.identity());
  auto none = read_token_count(file, *corpus);
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  write(file,
        fmt::format(R"({{"format": 1, "dataset": "{}", "tokenizer": "{}", "tokens": 123456, "documents": 2,
                              "counted_by": "tok.Tokenizer", "time": 1}})",
                    corpus->path.string(), c.tokenizer.string()));
  auto got = read_token_count(file, *corpus);
  REQUIRE(got.has_value());
  REQUIRE(got->has_value());
  CHECK((*got)->tokens == 123456);
  CHECK((*got)->documents == std::optional<std::uint64_t>{2});
  CHECK((*got)->counted_by == "tok.Tokenizer");
  write(file, R"({"format": 1, "dataset": "/elsewhere", "tokens": 5})");
  auto other = read_token_count(file, *corpus);
  REQUIRE_FALSE(other.has_value());
  CHECK_THAT(other.error().what, Catch::Contains("counts another corpus"));
  for (const char* bad :
       {"not json", R"({"format": 2, "tokens": 5})", R"({"format": 1, "tokens": -5})", "[]"}) {
    write(file, bad);
    auto e = read_token_count(file, *corpus);
    REQUIRE_FALSE(e.has_value());
    CHECK_THAT(e.error().what, Catch::Contains("is damaged"));
    CHECK(e.error().where == file.string());
  }
}

TEST_CASE("token_count: the plan takes the stated count, else the cached one, else an estimate it labels") {
  Corpus c;
  const auto text = fmt::format(R"(
[model]
layers = 2
hidden = 64
heads = 4
vocab = 256
seq_len = 3
[cluster]
instance = "cpu"
nodes = 1
cores_per_node = 2
[train]
gbs = 2
lr = 1e-3
[dataset]
path = "{}"
tokenizer = "{}"
[run]
runs_dir = "{}"
[upstream]
package = "torchtitan-neuron"
module = "m"
config = "c"
[stages.convert]
enabled = false
[stages.precompile]
enabled = false
[stages.train]
command = "true"
[stages.convert_back]
enabled = false
)",
                                c.data.string(), c.tokenizer.string(), c.runs.string());
  auto recipe = load_recipe_text(text, "t.toml");
  REQUIRE(recipe.has_value());
  // Estimate: 44 bytes / 4 = 11 tokens; 11 // (3 + 1) = 2 samples.
  auto size = count_recipe_dataset(*recipe);
  REQUIRE(size.has_value());
  CHECK(size->format == "estimate");
  CHECK(size->tokens == std::optional<std::uint64_t>{11});
  CHECK(size->samples == 2);
  CHECK_THAT(size->basis, Catch::Contains("44 bytes in 2 files"));
  const auto file = fs::path(size->token_count_file);
  CHECK(file.parent_path() == c.runs / "token-counts");
  auto plan = make_plan(*recipe, *size);
  REQUIRE(plan.has_value());
  CHECK(
      std::ranges::any_of(plan->warnings, [](const std::string& w) { return w.find("ESTIMATE") != w.npos; }));
  CHECK(to_json(*plan).at("token_count_file") == file.string());
  // The count job's file.
  write(file,
        fmt::format(R"({{"format": 1, "dataset": "{}", "tokens": 4000}})", fs::absolute(c.data).string()));
  size = count_recipe_dataset(*recipe);
  REQUIRE(size.has_value());
  CHECK(size->format == "counted");
  CHECK(size->samples == 1000);
  // Stated in the recipe: neither the files nor the cache are read.
  auto stated =
      load_recipe_text(text, "t.toml", {{"dataset.tokens", "400", ""}, {"dataset.path", "/nope", ""}});
  REQUIRE(stated.has_value());
  size = count_recipe_dataset(*stated);
  REQUIRE(size.has_value());
  CHECK(size->format == "stated");
  CHECK(size->samples == 100);
  CHECK_THAT(size->basis, Catch::Contains("dataset.tokens"));
}
