// TorchTitan's data and batch rule (plan_torchtitan.cpp), each figure worked out by hand from
// the upstream code the rule cites.
#include <catch2/catch.hpp>

#include <string>

#include "plan_fixtures.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/plan/suggest.hpp"
#include "trnslurm/plan/trainer_rule.hpp"

using namespace trnslurm;
using trnslurm::test::bundled_recipe;

namespace {

Recipe qwen(const std::vector<Override>& overrides = {}) {
  return bundled_recipe("qwen3-8b-trn2", overrides);
}

DatasetSize tokens(std::uint64_t n, const Recipe& r) {
  auto s = torchtitan_rule().from_tokens(n, r.model.seq_len);
  REQUIRE(s.has_value());
  return *s;
}

Plan plan_of(const Recipe& r, const DatasetSize& d) {
  auto p = make_plan(r, d);
  if (!p) FAIL(to_string(p.error()));
  return *p;
}

Error refusal(const Recipe& r, const DatasetSize& d) {
  auto p = make_plan(r, d);
  REQUIRE_FALSE(p.has_value());
  return p.error();
}

}  // namespace

TEST_CASE("torchtitan: samples are chunks of seq_len + 1 tokens") {
  CHECK(text_dataset_size(2049 * 1000, 2048)->samples == 1000);
  CHECK(text_dataset_size(2049 * 1000 - 1, 2048)->samples == 999);  // NxD's Megatron rule gives 1000
  CHECK(dataset_size_from_tokens(2049 * 1000 - 1, 2048)->samples == 1000);
  CHECK(text_dataset_size(2049, 2048)->samples == 1);
  CHECK_FALSE(text_dataset_size(2048, 2048).has_value());
  CHECK_FALSE(text_dataset_size(100, 0).has_value());
}

TEST_CASE("torchtitan: the reference configuration on one trn2 node, by hand") {
  const Recipe r = qwen();
  REQUIRE(r.upstream.trainer == Trainer::torchtitan);
  // 1e9 tokens: floor(1e9 / 2049) = 488042 samples.
  const Plan p = plan_of(r, tokens(1'000'000'000, r));
  CHECK(p.dataset.samples == 488'042);  // 2049 x 488042 = 999998058
  CHECK(p.world_size == 64);
  CHECK(p.dp_shard == 16);  // 64 / (1 x 1 x 4 x 1)
  CHECK(p.dp == 16);
  CHECK(p.grad_accum == 1);  // 128 / (8 x 16)
  CHECK(p.samples_per_rank == 30'502);
  CHECK(p.micro_steps_per_epoch == 3'812);  // floor(30502 / 8)
  CHECK(p.steps_per_epoch == 3'812);
  CHECK(p.total_steps == 3'812);
  CHECK(p.warmup_steps == 200);
  CHECK(p.decay_steps == 3'612);  // no decay_ratio: every step after warmup
  CHECK(p.memory.fsdp);
  CHECK(p.memory.sharded_over == 16);
  CHECK(p.memory.fits());
  const auto j = to_json(p);
  CHECK(j.at("trainer") == "torchtitan");
  CHECK(j.at("track") == "current");
  CHECK(j.at("dp_shard") == 16);
  CHECK(j.at("dp_replicate") == 1);
  CHECK(j.at("cp") == 1);
  CHECK(j.at("decay_steps") == "3612");
  CHECK(j.at("module") == "torchtitan_neuron.models.qwen3");
  CHECK(j.at("config") == "qwen3_8b_tp4_fsdp16_sac");
  CHECK(j.at("tokenizer") == "/fsx/models/Qwen3-8B");
  CHECK(j.at("memory").at("layout") == "fsdp");
}

TEST_CASE("torchtitan: DP is replicate x shard, and the global batch must divide") {
  // 4 nodes: 256 ranks; replicate 2, cp 2, tp 4: shard = 256 / 16 = 16, DP = 32.
  const Recipe r = bundled_recipe("qwen3-8b-trn2-4nodes", {{"train.dp_replicate", "2", ""},
                                                           {"train.cp", "2", ""},
                                                           {"train.gbs", "256", ""},
                                                           {"train.mbs", "2", ""}});
  const Plan p = plan_of(r, tokens(1'000'000'000, r));
  CHECK(p.dp_shard == 16);
  CHECK(p.dp == 32);
  CHECK(p.grad_accum == 4);            // 256 / (2 x 32)
  CHECK(p.memory.sharded_over == 32);  // FSDP shards over dp_shard x cp
  const auto e =
      refusal(bundled_recipe("qwen3-8b-trn2-4nodes", {{"train.gbs", "100", ""}}), tokens(1'000'000'000, r));
  CHECK_THAT(e.what, Catch::Contains("gbs = 100 is not a multiple of mbs x dp = 8 x 64 = 512"));
  CHECK_THAT(e.hint, Catch::Contains("512"));
  CHECK(e.where == "--set train.gbs");
}

TEST_CASE("torchtitan: what upstream's code refuses is refused") {
  const Recipe base = qwen();
  const auto d = tokens(1'000'000'000, base);
  SECTION("replicate x shard x cp x tp x pp = world size") {
    const auto e = refusal(qwen({{"train.dp_replicate", "3", ""}}), d);
    CHECK_THAT(e.what, Catch::Contains("is not a multiple of dp_replicate 3 x cp 1 x tp 4 x pp 1 = 12"));
    CHECK_THAT(e.where, Catch::Contains("qwen3-8b-trn2.toml:"));
  }
  SECTION("tp must divide the kv heads (no replication, unlike NxD)") {
    const auto e = refusal(qwen({{"train.tp", "16", ""}}), d);
    CHECK_THAT(e.what, Catch::Contains("tp = 16 does not divide the model's 8 kv heads"));
    CHECK_THAT(e.hint, Catch::Contains("use tp = 8"));
  }
  SECTION("sequence parallel: seq_len divisible by tp; context parallel: by 2 x cp") {
    auto e = refusal(qwen({{"model.seq_len", "2050", ""}}), d);
    CHECK_THAT(e.what, Catch::Contains("seq_len = 2050 is not divisible by 4"));
    e = refusal(qwen({{"model.seq_len", "2052", ""}, {"train.cp", "2", ""}}), d);
    CHECK_THAT(e.what, Catch::Contains("seq_len = 2052 is not divisible by 16 (tp 4 x 2 x cp 2)"));
    CHECK(make_plan(qwen({{"model.seq_len", "2064", ""}, {"train.cp", "2", ""}, {"train.gbs", "128", ""}}), d)
              .has_value());
  }
  SECTION("too few tokens for one optimizer step") {
    const auto e = refusal(base, tokens(2049 * 10, base));
    CHECK_THAT(e.what, Catch::Contains("fewer than the 1 of one optimizer step"));
  }
}

TEST_CASE("torchtitan: warmup and decay as its LR scheduler counts them") {
  // 100 steps: 12800 samples of 2049 tokens on DP 16 with gbs 128.
  const auto d = tokens(2049ull * 12800, qwen());
  SECTION("decay_ratio: round(total x ratio), Python's round halves to even") {
    Plan p = plan_of(qwen({{"train.decay_ratio", "0.125", ""}, {"train.warmup_steps", "10", ""}}), d);
    CHECK(p.total_steps == 100);
    CHECK(p.decay_steps == 12);  // round(12.5) = 12
    p = plan_of(qwen({{"train.decay_ratio", "0.135", ""}, {"train.warmup_steps", "10", ""}}), d);
    CHECK(p.decay_steps == 14);  // round(13.5) = 14
  }
  SECTION("warmup + decay above the total: decay cut to the rest, with the scheduler's warning") {
    const Plan p = plan_of(qwen({{"train.decay_ratio", "0.9", ""}, {"train.warmup_steps", "20", ""}}), d);
    CHECK(p.decay_steps == 80);
    CHECK(std::ranges::any_of(p.warnings,
                              [](const std::string& w) { return w.find("decay cut to 80") != w.npos; }));
  }
  SECTION("warmup above the total is capped") {
    const Plan p = plan_of(qwen({{"train.warmup_steps", "500", ""}}), d);
    CHECK(p.warmup_steps == 100);
    CHECK(p.decay_steps == 0);
  }
}

TEST_CASE("torchtitan: memory is FSDP's, sharded over dp_shard x cp") {
  const Recipe r = qwen();
  const auto d = tokens(1'000'000'000, r);
  const Plan one = plan_of(r, d);
  const Plan four = plan_of(bundled_recipe("qwen3-8b-trn2-4nodes"), d);
  const auto& m = one.memory;
  // fp32 weights and gradients, AdamW's two fp32 moments: 16 bytes a parameter over 16 ranks.
  CHECK(m.weights == (4 * m.parameters_per_core + 15) / 16);
  CHECK(m.gradients == m.weights);
  CHECK(m.optimizer == (8 * m.parameters_per_core + 15) / 16);
  // Four times the ranks, a quarter of the state; activations unchanged.
  CHECK(four.memory.optimizer == (8 * m.parameters_per_core + 63) / 64);
  CHECK(four.memory.activations == m.activations);
  // Selective: 34 s b h / t per layer, 36 layers, + fp32 logits 4 s b v / t.
  CHECK(m.activations == 34ull * 2048 * 8 * 4096 / 4 * 36 + 4ull * 2048 * 8 * 151936 / 4);
  // Full recompute keeps each layer's input and rebuilds one layer at a time.
  const Plan full = plan_of(qwen({{"train.ac", "full", ""}}), d);
  CHECK(full.memory.activations ==
        2ull * 2048 * 8 * 4096 / 4 * 36 + 34ull * 2048 * 8 * 4096 / 4 + 4ull * 2048 * 8 * 151936 / 4);
  // Twice upstream's default local batch does not fit a 24 GiB core at TP 4.
  const Plan sixteen = plan_of(qwen({{"train.mbs", "16", ""}, {"train.gbs", "256", ""}}), d);
  CHECK_FALSE(sixteen.memory.fits());
}

TEST_CASE("torchtitan: every bundled TorchTitan recipe plans and fits") {
  for (const char* name :
       {"qwen3-8b-trn2", "qwen3-8b-trn2-4nodes", "qwen3-8b-trn3", "llama31-8b-trn2", "llama31-70b-trn2"}) {
    INFO(name);
    const Recipe r = bundled_recipe(name);
    CHECK(r.upstream.trainer == Trainer::torchtitan);
    const Plan p = plan_of(r, tokens(10'000'000'000, r));
    CHECK(p.memory.fits());
    CHECK(p.grad_accum == 1);  // each is the local batch x DP of its configuration
    CHECK(p.warmup_steps == 200);
  }
  // The 70B-class configuration spans nodes and holds its state only because FSDP shards it.
  const Recipe big = bundled_recipe("llama31-70b-trn2");
  CHECK(big.cluster.nodes > 1);
  const Plan p = plan_of(big, tokens(10'000'000'000, big));
  CHECK(p.memory.parameters > 70'000'000'000);
  CHECK(p.memory.sharded_over == 64);
  CHECK(16 * p.memory.parameters_per_core > p.memory.capacity);  // unsharded it would not fit
}

TEST_CASE("torchtitan: --suggest ranks only what the rule accepts") {
  const Recipe r = qwen();
  SuggestOptions o;
  o.nodes_max = 2;
  o.mbs_max = 2;
  auto s = suggest(r, tokens(1'000'000'000, r), o);
  REQUIRE(s.has_value());
  REQUIRE_FALSE(s->ranked.empty());
  for (const auto& x : s->ranked) {
    INFO(x.config.tp);
    CHECK(r.model.kv_heads % x.config.tp == 0);  // never replicated: TorchTitan refuses it
    CHECK(x.kv == KvHeads::split);
    CHECK(x.memory.fsdp);
  }
  CHECK(std::ranges::any_of(s->refused, [](const Refusals& x) { return x.key == "train.tp"; }));
}
