#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "trnslurm/upstream/args.hpp"

using namespace trnslurm;
using namespace trnslurm::upstream;

namespace {
const SourcePos start{"recipe.toml", 10, 5};

// Each word as "text@line:column".
std::vector<std::string> split(std::string_view text) {
  auto words = split_args(text, start);
  INFO(text << " -> " << (words ? "" : to_string(words.error())));
  REQUIRE(words.has_value());
  std::vector<std::string> out;
  for (const auto& w : *words) {
    CHECK(w.pos.file == "recipe.toml");
    out.push_back(w.text + "@" + std::to_string(w.pos.line) + ":" + std::to_string(w.pos.column));
  }
  return out;
}

Error refused(std::string_view text) {
  auto words = split_args(text, start);
  REQUIRE_FALSE(words.has_value());
  return words.error();
}

using Words = std::vector<std::string>;
}  // namespace

TEST_CASE("split_args: blanks and newlines separate, positions from the text's start") {
  CHECK(split("--batch_size 8") == Words{"--batch_size@10:5", "8@10:18"});
  CHECK(split("  --a\t1\n   --b 2\n") == Words{"--a@10:7", "1@10:11", "--b@11:4", "2@11:8"});
  CHECK(split("").empty());
  CHECK(split(" \n\t ").empty());
}

TEST_CASE("split_args: quotes join, and are removed from the text") {
  CHECK(split(R"(--name 'a b' --dir "x y")") ==
        Words{"--name@10:5", "a b@10:12", "--dir@10:18", "x y@10:24"});
  CHECK(split(R"(--v a'b c'"d")") == Words{"--v@10:5", "ab cd@10:9"});
  CHECK(split(R"(--empty '')") == Words{"--empty@10:5", "@10:13"});
  CHECK(split(R"("a \"q\" \\ b")") == Words{R"(a "q" \ b@10:5)"});
  CHECK(split("'$HOME; (x) | y'") == Words{"$HOME; (x) | y@10:5"});  // literal inside '...'
  CHECK(split(R"(a\ b)") == Words{"a b@10:5"});
}

TEST_CASE("split_args: continuations and comments") {
  CHECK(split("--a 1 \\\n  --b 2") == Words{"--a@10:5", "1@10:9", "--b@11:3", "2@11:7"});
  CHECK(split("--a 1\\\n2") == Words{"--a@10:5", "12@10:9"});
  CHECK(split("--a 1 # the rest 'is' a comment\n--b") == Words{"--a@10:5", "1@10:9", "--b@11:1"});
  CHECK(split("x#y") == Words{"x#y@10:5"});  // '#' inside a word is a character
}

TEST_CASE("split_args: placeholders stay as written, blanks inside included") {
  CHECK(split("--batch_size {{train.mbs}}") == Words{"--batch_size@10:5", "{{train.mbs}}@10:18"});
  CHECK(split("--dir {{ run.dir }}/ckpt") == Words{"--dir@10:5", "{{ run.dir }}/ckpt@10:11"});
  CHECK(split(R"(--dir "{{ run.dir }}")") == Words{"--dir@10:5", "{{ run.dir }}@10:11"});
  CHECK(split(R"(--x \{{y}})") == Words{"--x@10:5", R"(\{{y}}@10:9)"});
  CHECK(has_placeholder("{{a}}"));
  CHECK(has_placeholder("pre{{a}}post"));
  CHECK_FALSE(has_placeholder(R"(\{{a}})"));
  CHECK_FALSE(has_placeholder("{a}"));
}

TEST_CASE("split_args: columns count characters, not bytes") {
  CHECK(split("--name é 1") == Words{"--name@10:5", "é@10:12", "1@10:14"});
}

TEST_CASE("split_args: refuses what the shell would expand or run, at its position") {
  const Error dollar = refused("--dir $HOME/x");
  CHECK(dollar.what == "'$' in an argument list: the shell would expand it");
  CHECK(dollar.where == "recipe.toml:10:11");
  CHECK(dollar.hint.starts_with("write the value itself or a {{placeholder}}"));

  CHECK(refused(R"(--dir "$HOME")").where == "recipe.toml:10:12");
  CHECK(refused("--x `date`").what == "'`' in an argument list: the shell would expand it");

  for (const auto& [text, column] : std::vector<std::pair<std::string, int>>{{"--a 1; rm x", 10},
                                                                             {"--a 1 | tee", 11},
                                                                             {"--a 1 &", 11},
                                                                             {"--a <in", 9},
                                                                             {"--a >out", 9},
                                                                             {"--a (x)", 9}}) {
    const Error e = refused(text);
    INFO(text);
    CHECK(e.what ==
          fmt::format("'{}' outside quotes in an argument list", text[static_cast<std::size_t>(column - 5)]));
    CHECK(e.where == "recipe.toml:10:" + std::to_string(column));
  }
}

TEST_CASE("split_args: refuses unterminated quotes and placeholders at where they open") {
  const Error single = refused("--a 'open\n--b");
  CHECK(single.what == "unterminated ' in an argument list");
  CHECK(single.where == "recipe.toml:10:9");
  CHECK(refused("--a \"open").what == "unterminated \" in an argument list");
  const Error placeholder = refused("--a x{{train.mbs");
  CHECK(placeholder.what == "unterminated {{ in an argument list");
  CHECK(placeholder.where == "recipe.toml:10:10");
}
