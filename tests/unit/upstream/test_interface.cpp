#include <catch2/catch.hpp>

#include <string>

#include "mini_interface.hpp"
#include "trnslurm/upstream/interface.hpp"

using namespace trnslurm;
using namespace trnslurm::upstream;

namespace {
Interface mini() {
  auto parsed = parse_interface(test::mini_record, "mini.json");
  REQUIRE(parsed.has_value());
  return *parsed;
}

// The mini record with one piece of text replaced, for the refusals.
std::string mini_with(std::string_view from, std::string_view to) {
  std::string text(test::mini_record);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

const std::string tp_zero1 =
    "examples/training/llama/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py";
const std::string tp_pp = "examples/training/llama/tp_pp_llama_hf_pretrain/run_llama_nxd.py";
const std::string convert = "examples/training/llama/convert_checkpoints.py";
}  // namespace

TEST_CASE("interface: a record's header, scripts and flags") {
  const Interface i = mini();
  CHECK(i.package == "mini");
  CHECK(i.release == "1.0");
  CHECK(i.commit == "0123456789abcdef0123456789abcdef01234567");
  CHECK(i.source == "mini.json");
  REQUIRE(i.scripts.size() == 2);
  const ScriptInterface& a = i.scripts[0];
  CHECK(a.path == "examples/a/train.py");
  CHECK(a.parse == ParseMode::strict);
  CHECK(i.scripts[1].parse == ParseMode::known);
  CHECK(i.scripts[1].parser_file == "src/pkg/conv.py");
  REQUIRE(a.flags.size() == 12);
  const Flag* batch = a.find("--batch_size");
  REQUIRE(batch != nullptr);
  CHECK(batch->type == ValueType::integer);
  CHECK(batch->type_text == "int");
  CHECK(batch->default_value == 8);
  CHECK_FALSE(batch->required);
  CHECK(a.find("--name")->required);
  CHECK(a.find("--fuse_qkv")->type == ValueType::boolean);
  CHECK(a.find("--mode")->choices.size() == 2);
  CHECK(a.find("--out")->default_value == nlohmann::json{{"expr", "os.path.join('a', 'b')"}});
  CHECK(a.find("-v") == a.find("--verbose"));
  CHECK(a.find("--batch") == nullptr);  // exact names only: prefixes are check_args' business
  CHECK(a.find("input") == nullptr);
}

TEST_CASE("interface: what each kind of flag takes") {
  const Interface i = mini();
  const ScriptInterface& a = i.scripts[0];
  CHECK(a.find("--batch_size")->takes_value());
  CHECK_FALSE(a.find("--use_zero_1")->takes_value());
  CHECK_FALSE(a.find("--verbose")->takes_value());
  CHECK(a.find("--use_zero_1")->min_values() == 0);
  CHECK(a.find("--batch_size")->min_values() == 1);
  CHECK(a.find("--batch_size")->max_values() == 1u);
  CHECK(a.find("--layers")->min_values() == 1);
  CHECK_FALSE(a.find("--layers")->max_values().has_value());
  CHECK(a.find("--out")->min_values() == 0);
  CHECK(a.find("--out")->max_values() == 1u);
  CHECK(a.find("--tags")->repeatable());
  CHECK(a.find("--verbose")->repeatable());
  CHECK_FALSE(a.find("--lr")->repeatable());
  CHECK(i.scripts[1].flags[1].positional());
  CHECK(a.option_names().size() == 13);  // -v and --verbose both count
}

TEST_CASE("interface: a script found by its path relative to a scripts directory") {
  const Interface i = mini();
  auto exact = i.script("examples/a/train.py");
  REQUIRE(exact.has_value());
  CHECK((*exact)->path == "examples/a/train.py");
  auto relative = i.script("b/train.py");
  REQUIRE(relative.has_value());
  CHECK((*relative)->path == "examples/b/train.py");

  auto ambiguous = i.script("train.py");
  REQUIRE_FALSE(ambiguous.has_value());
  CHECK(ambiguous.error().what == "'train.py' names several scripts of the mini 1.0 interface record");
  CHECK(ambiguous.error().hint == "give more of the path: examples/a/train.py, examples/b/train.py");

  auto partial_name = i.script("rain.py");  // a suffix, but not on a '/' boundary
  REQUIRE_FALSE(partial_name.has_value());
  CHECK(partial_name.error().what == "no script 'rain.py' in the mini 1.0 interface record");
  CHECK(partial_name.error().where == "mini.json");
  CHECK(partial_name.error().hint == "recorded scripts: examples/a/train.py, examples/b/train.py");
}

TEST_CASE("interface: launchers as recorded") {
  const Interface i = mini();
  const Launcher* l = i.launcher("examples/a/run.sh");
  REQUIRE(l != nullptr);
  CHECK(l->runs == "examples/a/train.py");
  CHECK(l->env.at("MALLOC_ARENA_MAX") == "64");
  CHECK(l->settings.at("MBS") == "1");
  REQUIRE(l->args.size() == 3);
  CHECK(l->args[0].flag == "--batch_size");
  CHECK(l->args[0].values == std::vector<std::string>{"$MBS"});
  CHECK(l->args[1].values == std::vector<std::string>{"1", "2"});
  CHECK(l->args[2].values.empty());
  CHECK(l->args[2].conditional);
  CHECK_FALSE(l->args[0].conditional);
  CHECK(i.launcher("examples/a/other.sh") == nullptr);
}

TEST_CASE("interface: progress line formats and how the trainer calls the logger") {
  const Interface i = mini();
  REQUIRE(i.log_formats.size() == 2);
  const LogFormat& log = i.log_formats[0];
  CHECK(log.key == "examples/a/logger.py");
  CHECK(log.path == "examples/a/logger.py");
  CHECK(log.label.empty());
  REQUIRE(log.pieces.size() == 4);
  CHECK(log.pieces[0].literal == "LOG ");
  CHECK_FALSE(log.pieces[0].field);
  CHECK(log.pieces[3].field == "loss");
  CHECK(log.pieces[3].spec == ".4f");
  REQUIRE(log.call);
  CHECK(log.call->arguments.at("step") == "global_step");
  CHECK(log.call->counted.at("global_step") == "before");
  CHECK(log.call->when == std::vector<std::string>{"global_step % 2 == 0"});
  CHECK(i.log_formats[1].label == "finished");
  CHECK(i.log_formats[1].path == "examples/a/train.py");
  CHECK_FALSE(i.log_formats[1].call);
}

TEST_CASE("interface: a malformed progress line format is refused") {
  auto moment =
      parse_interface(mini_with(R"("global_step": "before")", R"("global_step": "soon")"), "m.json");
  REQUIRE_FALSE(moment);
  CHECK(moment.error().where == "m.json: log_formats[examples/a/logger.py].call.counted[global_step]");
  auto empty = parse_interface(mini_with(R"("pieces": ["Done"])", R"("pieces": [])"), "m.json");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().where == "m.json: log_formats[examples/a/train.py#finished].pieces");
  auto field = parse_interface(mini_with(R"({"field": "step"})", R"({"spec": "d"})"), "m.json");
  REQUIRE_FALSE(field);
  CHECK(field.error().what == "missing 'field'");
}

TEST_CASE("interface: a malformed record is refused with where in the JSON") {
  auto not_json = parse_interface("{\"format\": 1,", "bad.json");
  REQUIRE_FALSE(not_json.has_value());
  CHECK(not_json.error().what.starts_with("not JSON: "));
  CHECK(not_json.error().where == "bad.json: byte 14");

  auto no_type = parse_interface(mini_with(R"("type": "float", )", ""), "mini.json");
  REQUIRE_FALSE(no_type.has_value());
  CHECK(no_type.error().what == "missing 'type'");
  CHECK(no_type.error().where == "mini.json: scripts[examples/a/train.py].flags[1]");
  CHECK(no_type.error().hint == "regenerate the record with tools/upstream-interface (docs/upstream.md)");

  auto lenient = parse_interface(mini_with(R"("parse": "known")", R"("parse": "lenient")"), "mini.json");
  REQUIRE_FALSE(lenient.has_value());
  CHECK(lenient.error().what == "'strict' or 'known' expected");
  CHECK(lenient.error().where == "mini.json: scripts[examples/b/train.py].parse");

  auto bad_type = parse_interface(mini_with(R"("type": "float")", R"("type": "double")"), "mini.json");
  REQUIRE_FALSE(bad_type.has_value());
  CHECK(bad_type.error().where == "mini.json: scripts[examples/a/train.py].flags[1].type");

  auto bad_nargs = parse_interface(mini_with(R"("nargs": "+")", R"("nargs": "many")"), "mini.json");
  REQUIRE_FALSE(bad_nargs.has_value());
  CHECK(bad_nargs.error().where == "mini.json: scripts[examples/a/train.py].flags[5].nargs");

  auto newer = parse_interface(mini_with(R"("format": 1)", R"("format": 2)"), "mini.json");
  REQUIRE_FALSE(newer.has_value());
  CHECK(newer.error().what == "format 1 (a newer trnslurm reads this record) expected");

  auto required = parse_interface(mini_with(R"("required": true)", R"("required": "yes")"), "mini.json");
  REQUIRE_FALSE(required.has_value());
  CHECK(required.error().where == "mini.json: scripts[examples/a/train.py].flags[4].required");
}

TEST_CASE("interface: every bundled record of scripts parses") {
  std::size_t script_records = 0;
  for (const auto& record : detail::bundled_interface_texts()) {
    const auto j = nlohmann::json::parse(record.text);
    if (!j.contains("scripts")) continue;
    ++script_records;
    auto parsed = parse_interface(record.text, record.name);
    INFO(record.name << ": " << (parsed ? "" : to_string(parsed.error())));
    CHECK(parsed.has_value());
  }
  CHECK(script_records >= 2);
  CHECK(bundled_interfaces().size() == script_records);
}

TEST_CASE("interface: the bundled neuronx-distributed 2.29 record, parsed once") {
  const Interface* nxd = bundled_interface("neuronx-distributed", "2.29");
  REQUIRE(nxd != nullptr);
  CHECK(nxd == bundled_interface("neuronx-distributed", "2.29"));
  CHECK(nxd->commit == "fbac349b61a3adbb123c2983835af692840ff62f");
  CHECK(nxd->source == "bundled:interfaces/neuronx-distributed-2.29.json");
  REQUIRE(bundled_interface("neuronx-distributed", "2.28") != nullptr);
  CHECK(bundled_interface("neuronx-distributed", "2.99") == nullptr);
  CHECK(bundled_interface("neuron_parallel_compile", "2.29") == nullptr);  // a tool record, not scripts

  auto zero1 = nxd->script("tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py");
  REQUIRE(zero1.has_value());
  CHECK((*zero1)->path == tp_zero1);
  CHECK((*zero1)->parse == ParseMode::strict);
  CHECK_FALSE((*zero1)->find("--pretrained_weight")->takes_value());
  CHECK((*zero1)->find("--global_batch_size") == nullptr);

  auto pp = nxd->script("tp_pp_llama_hf_pretrain/run_llama_nxd.py");
  REQUIRE(pp.has_value());
  CHECK((*pp)->path == tp_pp);
  CHECK((*pp)->parse == ParseMode::known);
  CHECK((*pp)->find("--pretrained_weight")->type == ValueType::integer);

  auto converter = nxd->script("convert_checkpoints.py");
  REQUIRE(converter.has_value());
  CHECK((*converter)->path == convert);
  CHECK((*converter)->parser_file == "src/neuronx_distributed/scripts/checkpoint_converter.py");
  CHECK((*converter)->find("--hw_backend")->required);
  CHECK((*converter)->find("--fuse_qkv")->type == ValueType::boolean);

  const Launcher* launcher =
      nxd->launcher("examples/training/llama/tp_zero1_llama_hf_pretrain/tp_zero1_llama3_8B_hf_pretrain.sh");
  REQUIRE(launcher != nullptr);
  CHECK(launcher->runs == tp_zero1);
  CHECK(launcher->env.at("MALLOC_ARENA_MAX") == "64");
  CHECK(launcher->settings.at("GBS") == "1024");
}
