#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "trnslurm/upstream/args.hpp"

using namespace trnslurm;
using namespace trnslurm::upstream;

// The bundled TorchTitan record (interfaces/torchtitan-neuron-2.33.json, pytorch/torchtitan
// c82675eb6): `--section.field VALUE` lists checked as tyro would parse them.
namespace {
const ScriptInterface& train() {
  const Interface* i = bundled_interface("torchtitan-neuron", "2.33");
  REQUIRE(i != nullptr);
  auto s = i->script("torchtitan/train.py");
  REQUIRE(s.has_value());
  return **s;
}

std::vector<ArgProblem> check(std::string_view text, bool require = false) {
  auto words = split_args(text, {"r.toml", 1, 1});
  REQUIRE(words.has_value());
  CheckOptions options;
  options.where = {"r.toml", 3, 1};
  options.require = require;
  return check_args(train(), *words, options);
}

bool has(const std::vector<ArgProblem>& problems, ArgIssue issue) {
  return std::ranges::any_of(problems, [&](const ArgProblem& p) { return p.issue == issue; });
}
}  // namespace

TEST_CASE("torchtitan record: bundled, strict, no abbreviations") {
  const Interface* i = bundled_interface("torchtitan-neuron", "2.33");
  REQUIRE(i != nullptr);
  CHECK(i->repository == "https://github.com/pytorch/torchtitan");
  CHECK(i->commit.size() == 40);
  CHECK(train().parse == ParseMode::strict);
  CHECK_FALSE(train().allow_abbrev);
  REQUIRE(i->script("convert_to_hf.py").has_value());
  REQUIRE(i->script("convert_from_hf.py").has_value());
}

TEST_CASE("torchtitan args: a reference command is clean") {
  const auto problems = check(
      "--module torchtitan_neuron.models.qwen3 --config qwen3_8b_tp4_fsdp16_sac "
      "--parallelism.tensor_parallel_degree 4 --parallelism.data_parallel_shard_degree -1 "
      "--training.local_batch_size 1 --training.global_batch_size 64 --training.seq_len 4096 "
      "--training.steps 100 --lr_scheduler.warmup_steps 10 --lr_scheduler.decay_ratio 0.8 "
      "--lr_scheduler.decay_type cosine --checkpoint.enable --checkpoint.interval=50 "
      "--checkpoint.no-last-save-model-only --checkpoint.exclude_from_loading dataloader,lr_scheduler "
      "--dump_folder /fsx/run --hf_assets_path /fsx/qwen3 --dataloader.dataset_path /fsx/data "
      "--metrics.disable_color_printing --debug.seed None",
      true);
  for (const auto& p : problems) INFO(p.what);
  CHECK(problems.empty());
}

TEST_CASE("torchtitan args: hyphens and underscores name the same field") {
  CHECK(check("--training.local-batch-size 2 --parallelism.no_enable_sequence_parallel").empty());
}

TEST_CASE("torchtitan args: an unknown flag is refused with did-you-mean") {
  const auto problems = check("--training.step 10");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::unknown_flag);  // not an abbreviation: tyro takes no prefix
  CHECK(problems[0].hint.find("did you mean '--training.steps'") != std::string::npos);
  CHECK(problems[0].pos.column == 1);
}

TEST_CASE("torchtitan args: flags upstream moved in 2026 are unknown") {
  for (const auto* old :
       {"--job.dump_folder /x", "--model.hf_assets_path /x", "--training.dataset_path /x"}) {
    INFO(old);
    CHECK(has(check(old), ArgIssue::unknown_flag));
  }
  const auto moved = check("--job.dump_folder /x");
  REQUIRE_FALSE(moved.empty());
  CHECK(moved[0].hint.find("--dump_folder") != std::string::npos);
}

TEST_CASE("torchtitan args: types, choices and optional values") {
  CHECK(has(check("--training.steps ten"), ArgIssue::bad_type));
  CHECK(has(check("--lr_scheduler.decay_ratio 0.x"), ArgIssue::bad_type));
  CHECK(has(check("--lr_scheduler.decay_type exponential"), ArgIssue::bad_choice));
  CHECK(check("--lr_scheduler.decay_ratio None").empty());
  CHECK(has(check("--debug.seed abc"), ArgIssue::bad_type));
}

TEST_CASE("torchtitan args: a bool is a switch pair, never given a value") {
  CHECK(has(check("--checkpoint.enable=False"), ArgIssue::switch_with_value));
  CHECK(has(check("--compile.enable true"), ArgIssue::switch_with_value));
  CHECK(check("--compile.enable --compile.backend neuron").empty());
  CHECK(check("--checkpoint.no_enable").empty());
}

TEST_CASE("torchtitan args: --module and --config are required") {
  const auto problems = check("--training.steps 10", true);
  CHECK(problems.size() == 2);
  CHECK(has(problems, ArgIssue::missing_required));
}

TEST_CASE("torchtitan args: the conversion scripts' flags") {
  const Interface* i = bundled_interface("torchtitan-neuron", "2.33");
  REQUIRE(i != nullptr);
  const auto* to_hf = *i->script("convert_to_hf.py");
  auto words = split_args(
      "in out --hf_assets_path a --model_name qwen3 --model_flavor 8B --export_dtype bf16", {"r.toml", 1, 1});
  REQUIRE(words.has_value());
  const auto problems = check_args(*to_hf, *words);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].issue == ArgIssue::bad_choice);
  CHECK(problems[0].what.find("float16, bfloat16, float32") != std::string::npos);
}
