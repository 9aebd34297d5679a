#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mini_interface.hpp"
#include "trnslurm/upstream/args.hpp"

using namespace trnslurm;
using namespace trnslurm::upstream;

namespace {
const Interface& mini() {
  static const Interface parsed = [] {
    auto i = parse_interface(test::mini_record, "mini.json");
    REQUIRE(i.has_value());
    return *i;
  }();
  return parsed;
}
const ScriptInterface& strict_script() {
  return mini().scripts[0];
}  // examples/a/train.py
const ScriptInterface& known_script() {
  return mini().scripts[1];
}  // examples/b/train.py

std::vector<ArgWord> words_of(std::string_view text) {
  auto words = split_args(text, {"r.toml", 1, 1});
  REQUIRE(words.has_value());
  return *words;
}

std::vector<ArgProblem> check(const ScriptInterface& script, std::string_view text, bool require = false) {
  CheckOptions options;
  options.where = {"r.toml", 3, 1};
  options.require = require;
  return check_args(script, words_of(text), options);
}

std::string at(const ArgProblem& p) {
  return to_string(p.pos);
}

const ScriptInterface& nxd(std::string_view script) {
  const Interface* i = bundled_interface("neuronx-distributed", "2.29");
  REQUIRE(i != nullptr);
  auto s = i->script(script);
  REQUIRE(s.has_value());
  return **s;
}
}  // namespace

TEST_CASE("check_args: what upstream accepts gives no problem") {
  CHECK(
      check(strict_script(),
            "--name x --batch_size 8 --lr 1e-3 --use_zero_1 --layers 1 2 --mode slow --tags a --tags b -v -v "
            "--level 2 --out",
            true)
          .empty());
  CHECK(check(strict_script(), "--name=y --batch_size=-3 --lr=inf", true).empty());
  CHECK(check(strict_script(), "--lr .5 --lr_x", false).size() == 1);  // only the unknown --lr_x
  CHECK(
      check(strict_script(), "--name x --batch_size 1_000 --lr 1_000.5e-3 --out o --use_mix_precision", true)
          .empty());
  CHECK(check(known_script(), "--steps 5 in", true).empty());
  CHECK(check(known_script(), "-- --steps", true).empty());  // after --, a positional
}

TEST_CASE("check_args: an unknown flag, refused by a strict parser") {
  const auto problems = check(strict_script(), "--name x --batch_sise 8");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::unknown_flag);
  CHECK(at(problems[0]) == "r.toml:1:10");
  CHECK(problems[0].what == "'--batch_sise' is not a flag of train.py");
  CHECK(problems[0].hint ==
        "train.py parses its arguments strictly and stops with 'unrecognized arguments'; did you mean "
        "'--batch_size'?");
}

TEST_CASE("check_args: an unknown flag, silently ignored by a lenient parser") {
  const auto problems = check(known_script(), "--stepz 5 in");
  REQUIRE(problems.size() == 1);  // its value goes with it, not reported again as a stray word
  CHECK(problems[0].issue == ArgIssue::unknown_flag);
  CHECK(problems[0].hint ==
        "train.py reads its arguments with parse_known_args and would ignore it without a word; did you mean "
        "'--steps'?");
  CheckOptions named;
  named.script = "b/train.py (mini 1.0)";
  const auto renamed = check_args(known_script(), words_of("--x 1 in"), named);
  REQUIRE(renamed.size() == 1);
  CHECK(renamed[0].what == "'--x' is not a flag of b/train.py (mini 1.0)");
}

TEST_CASE("check_args: abbreviations and ambiguous prefixes") {
  const auto abbreviated = check(strict_script(), "--name x --batch 8");
  REQUIRE(abbreviated.size() == 1);
  CHECK(abbreviated[0].issue == ArgIssue::abbreviation);
  CHECK(at(abbreviated[0]) == "r.toml:1:10");
  CHECK(abbreviated[0].what == "'--batch' abbreviates '--batch_size'");

  const auto abbreviated_bad_value = check(strict_script(), "--batch x");
  REQUIRE(abbreviated_bad_value.size() == 2);  // the value is still checked as the flag's
  CHECK(abbreviated_bad_value[1].issue == ArgIssue::bad_type);

  const auto ambiguous = check(strict_script(), "--use");
  REQUIRE(ambiguous.size() == 1);
  CHECK(ambiguous[0].issue == ArgIssue::ambiguous_flag);
  CHECK(ambiguous[0].what ==
        "'--use' is a prefix of several flags of train.py: --use_zero_1, --use_mix_precision");
  CHECK(ambiguous[0].hint == "write the full name: upstream stops with 'ambiguous option'");
}

TEST_CASE("check_args: a switch followed by a value") {
  const auto spaced = check(strict_script(), "--use_zero_1 /dir --name x");
  REQUIRE(spaced.size() == 1);
  CHECK(spaced[0].issue == ArgIssue::switch_with_value);
  CHECK(at(spaced[0]) == "r.toml:1:14");
  CHECK(spaced[0].what ==
        "'--use_zero_1' is a switch (store_true) of train.py and takes no value: '/dir' would be read as a "
        "separate argument");
  CHECK(spaced[0].hint ==
        "write '--use_zero_1' alone to turn it on, leave it out to keep it off; upstream stops with "
        "'unrecognized arguments'");

  const auto inline_value = check(strict_script(), "--use_zero_1=yes");
  REQUIRE(inline_value.size() == 1);
  CHECK(inline_value[0].issue == ArgIssue::switch_with_value);
  CHECK(at(inline_value[0]) == "r.toml:1:14");
}

TEST_CASE("check_args: a flag that takes a value without one") {
  const auto before_flag = check(strict_script(), "--name x --batch_size --lr 1");
  REQUIRE(before_flag.size() == 1);
  CHECK(before_flag[0].issue == ArgIssue::missing_value);
  CHECK(at(before_flag[0]) == "r.toml:1:10");
  CHECK(before_flag[0].what == "'--batch_size' takes a value (int) but is followed by '--lr'");
  CHECK(before_flag[0].hint == "give its value after it: upstream stops with 'expected one argument'");

  const auto at_end = check(strict_script(), "--mode");
  REQUIRE(at_end.size() == 1);
  CHECK(at_end[0].what == "'--mode' takes a value (str) but ends the list");

  const auto none_for_list = check(strict_script(), "--layers --lr 1");
  REQUIRE(none_for_list.size() == 1);
  CHECK(none_for_list[0].issue == ArgIssue::missing_value);

  // argparse reads -1e-3 as an option (it is not ^-\d+$ or ^-\d*\.\d+$): the value is missing.
  const auto exponent = check(strict_script(), "--lr -1e-3");
  REQUIRE(exponent.size() == 2);
  CHECK(exponent[0].issue == ArgIssue::missing_value);
  CHECK(exponent[1].issue == ArgIssue::unknown_flag);
  CHECK(check(strict_script(), "--lr -0.5 --batch_size -1").empty());
}

TEST_CASE("check_args: --flag=value is split where argparse splits it") {
  const auto problems = check(strict_script(), "--name=x --batch_size=abc");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::bad_type);
  CHECK(at(problems[0]) == "r.toml:1:23");
  CHECK(problems[0].what == "'abc' is not an int, which '--batch_size' takes");
  CHECK(problems[0].hint == "upstream stops with 'invalid int value'");
}

TEST_CASE("check_args: a flag given twice, unless it accumulates") {
  const auto problems = check(strict_script(), "--lr 1 --tags a --lr 2 --tags b -v --verbose");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::repeated_flag);
  CHECK(at(problems[0]) == "r.toml:1:17");
  CHECK(problems[0].what == "'--lr' is given twice");
  CHECK(problems[0].hint == "give it once: upstream keeps only the last one");
}

TEST_CASE("check_args: a word no flag takes") {
  const auto strict = check(strict_script(), "--name x stray");
  REQUIRE(strict.size() == 1);
  CHECK(strict[0].issue == ArgIssue::unexpected_positional);
  CHECK(at(strict[0]) == "r.toml:1:10");
  CHECK(strict[0].what == "'stray' is not the value of any flag, and train.py takes no positional arguments");

  const auto known = check(known_script(), "in extra");
  REQUIRE(known.size() == 1);
  CHECK(known[0].issue == ArgIssue::unexpected_positional);
  CHECK(at(known[0]) == "r.toml:1:4");
  CHECK(known[0].hint == "upstream ignores it without a word; is a flag missing before it?");
}

TEST_CASE("check_args: required flags, when the list is the whole call") {
  const auto problems = check(strict_script(), "--batch_size 8", true);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::missing_required);
  CHECK(at(problems[0]) == "r.toml:3:1");
  CHECK(problems[0].what == "train.py requires '--name'");
  CHECK(problems[0].hint == "add '--name VALUE': upstream stops with 'the following arguments are required'");
  CHECK(check(strict_script(), "--batch_size 8", false).empty());
  const auto positional = check(known_script(), "--steps 1", true);
  REQUIRE(positional.size() == 1);
  CHECK(positional[0].what == "train.py requires 'input'");
}

TEST_CASE("check_args: literal values of the wrong type or outside the choices") {
  const auto not_float = check(strict_script(), "--lr fast");
  REQUIRE(not_float.size() == 1);
  CHECK(not_float[0].what == "'fast' is not a float, which '--lr' takes");
  CHECK(check(strict_script(), "--batch_size 1.5")[0].issue == ArgIssue::bad_type);
  CHECK(check(strict_script(), "--batch_size 1__0")[0].issue == ArgIssue::bad_type);
  CHECK(check(strict_script(), "--lr 1e")[0].issue == ArgIssue::bad_type);

  const auto choice = check(strict_script(), "--mode medium");
  REQUIRE(choice.size() == 1);
  CHECK(choice[0].issue == ArgIssue::bad_choice);
  CHECK(at(choice[0]) == "r.toml:1:8");
  CHECK(choice[0].what == "'medium' is not a choice of '--mode' (fast, slow)");
  CHECK(choice[0].hint == "upstream stops with 'invalid choice'");
  CHECK(check(strict_script(), "--mode slwo")[0].hint == "did you mean 'slow'?");
  CHECK(check(strict_script(), "--level 3")[0].what == "'3' is not a choice of '--level' (1, 2)");
  CHECK(check(strict_script(), "--level 2").empty());
}

TEST_CASE("check_args: a type=bool flag given a word meaning false") {
  const auto problems = check(strict_script(), "--fuse_qkv False");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::bool_false_is_true);
  CHECK(at(problems[0]) == "r.toml:1:12");
  CHECK(
      problems[0].what ==
      "'--fuse_qkv False' turns it on: upstream reads '--fuse_qkv' with type=bool, and any non-empty word is "
      "true (bool('False') is True)");
  CHECK(problems[0].hint == "leave '--fuse_qkv' out to keep it false (its default)");
  for (const char* word : {"false", "0", "no", "off", "FALSE", "''"}) {
    INFO(word);
    const auto p = check(strict_script(), std::string("--fuse_qkv ") + word);
    REQUIRE(p.size() == 1);
    CHECK(p[0].issue == ArgIssue::bool_false_is_true);
  }
  CHECK(check(strict_script(), "--fuse_qkv True").empty());
  CHECK(check(strict_script(), "--fuse_qkv 1").empty());
}

TEST_CASE("check_args: placeholders are left to the caller, given_flags says where they go") {
  const auto words =
      words_of("--name={{run.name}} --batch {{train.mbs}} --layers 1 {{x}} --use_zero_1 --fuse_qkv {{f}}");
  CheckOptions options;
  const auto problems = check_args(strict_script(), words, options);
  REQUIRE(problems.size() == 1);  // only the abbreviation: no value holding a placeholder is checked
  CHECK(problems[0].issue == ArgIssue::abbreviation);

  const auto given = given_flags(strict_script(), words);
  REQUIRE(given.size() == 5);
  CHECK(given[0].flag == strict_script().find("--name"));
  CHECK(given[0].option.text == "--name");
  REQUIRE(given[0].values.size() == 1);
  CHECK(given[0].values[0].text == "{{run.name}}");
  CHECK(to_string(given[0].values[0].pos) == "r.toml:1:8");
  CHECK(given[1].flag == strict_script().find("--batch_size"));
  CHECK(given[1].option.text == "--batch");
  CHECK(given[1].values[0].text == "{{train.mbs}}");
  CHECK(given[2].values.size() == 2);
  CHECK(given[3].flag == strict_script().find("--use_zero_1"));
  CHECK(given[3].values.empty());

  const auto rendered = check_value(*given[4].flag, "False");
  REQUIRE(rendered.has_value());
  CHECK(rendered->issue == ArgIssue::bool_false_is_true);
  CHECK(rendered->pos.file.empty());
  CHECK_FALSE(check_value(*given[1].flag, "4").has_value());
  CHECK(check_value(*given[1].flag, "four")->issue == ArgIssue::bad_type);
  CHECK(to_error(*check_value(*given[1].flag, "four")).where.empty());
}

TEST_CASE("check_args: the NxD 2.29 traps, against the bundled record") {
  const auto& zero1 = nxd("tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py");
  const auto gbs = check(zero1, "--global_batch_size 1024 --batch_size 1");
  REQUIRE(gbs.size() == 1);
  CHECK(gbs[0].issue == ArgIssue::unknown_flag);
  CHECK(gbs[0].what == "'--global_batch_size' is not a flag of tp_zero1_llama_hf_pretrain.py");
  CHECK(gbs[0].hint.starts_with("tp_zero1_llama_hf_pretrain.py parses its arguments strictly"));

  const auto weight_dir = check(zero1, "--pretrained_weight /ckpt/pretrained");
  REQUIRE(weight_dir.size() == 1);
  CHECK(weight_dir[0].issue == ArgIssue::switch_with_value);
  CHECK(at(weight_dir[0]) == "r.toml:1:21");
  CHECK(check(zero1, "--pretrained_weight --checkpoint_dir /ckpt").empty());

  const auto& pp = nxd("tp_pp_llama_hf_pretrain/run_llama_nxd.py");
  const auto pp_dir = check(pp, "--pretrained_weight /ckpt/pretrained");
  REQUIRE(pp_dir.size() == 1);
  CHECK(pp_dir[0].issue == ArgIssue::bad_type);
  CHECK(pp_dir[0].what == "'/ckpt/pretrained' is not an int, which '--pretrained_weight' takes");
  CHECK(check(pp, "--pretrained_weight 1").empty());
  const auto layers = check(pp, "--num_layers 4");
  REQUIRE(layers.size() == 1);
  CHECK(layers[0].hint ==
        "run_llama_nxd.py reads its arguments with parse_known_args and would ignore it without a word; did "
        "you "
        "mean '--num_layer'?");

  const auto& converter = nxd("llama/convert_checkpoints.py");
  const auto no_backend =
      check(converter, "--input_dir in --output_dir out --convert_from_full_state --tp_size 8", true);
  REQUIRE(no_backend.size() == 1);
  CHECK(no_backend[0].issue == ArgIssue::missing_required);
  CHECK(no_backend[0].what == "convert_checkpoints.py requires '--hw_backend'");
  const auto fuse = check(converter, "--fuse_qkv False");
  REQUIRE(fuse.size() == 1);
  CHECK(fuse[0].issue == ArgIssue::bool_false_is_true);
}

TEST_CASE("check_args: the upstream launchers pass only flags their script knows, as it takes them") {
  const Interface* i = bundled_interface("neuronx-distributed", "2.29");
  REQUIRE(i != nullptr);
  std::size_t checked = 0;
  for (const auto& launcher : i->launchers) {
    auto script = i->script(launcher.runs);
    if (!script) continue;  // a launcher running another launcher
    for (const auto& arg : launcher.args) {
      INFO(launcher.path << " " << arg.flag.value_or("(positional)"));
      REQUIRE(arg.flag.has_value());
      const Flag* flag = (*script)->find(*arg.flag);
      REQUIRE(flag != nullptr);
      CHECK(flag->takes_value() == !arg.values.empty());
      ++checked;
    }
  }
  CHECK(checked > 50);
}
