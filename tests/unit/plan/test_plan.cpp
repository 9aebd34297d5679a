#include <catch2/catch.hpp>

#include <numeric>
#include <set>
#include <string>

#include "plan_fixtures.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

using namespace trnslurm;
using trnslurm::test::rows;

namespace {
// The figures below were worked out by hand for tiny-cpu at TP 1 (DP 4), one epoch, any dataset
// format: pin those, whatever the demo recipe uses, then apply the test's own overrides. TP 1 is
// below tiny's 2 kv heads, which NxD's converter cannot shard ("the converter's refusal"): its
// stages are off here.
std::vector<Override> pinned(const std::string& name, const std::vector<Override>& overrides) {
  std::vector<Override> all;
  if (name == "tiny-cpu")
    all = {{"train.tp", "1", ""},
           {"train.epochs", "1", ""},
           {"dataset.format", "auto", ""},
           {"stages.convert.enabled", "false", ""},
           {"stages.convert_back.enabled", "false", ""}};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return all;
}

Recipe bundled(const std::string& name, const std::vector<Override>& overrides = {}) {
  return test::bundled_recipe(name, pinned(name, overrides));
}

Plan plan_of(const Recipe& recipe, std::uint64_t samples) {
  auto p = make_plan(recipe, rows(samples));
  if (!p) FAIL(to_string(p.error()));
  return *p;
}

Error refusal(const Recipe& recipe, std::uint64_t samples) {
  auto p = make_plan(recipe, rows(samples));
  REQUIRE_FALSE(p.has_value());
  return p.error();
}

bool has_warning(const Plan& p, const std::string& text) {
  return std::ranges::any_of(p.warnings,
                             [&](const std::string& w) { return w.find(text) != std::string::npos; });
}
}  // namespace

TEST_CASE("plan: Llama2-7B on 4 trn1 nodes, hand-computed") {
  const Plan p = plan_of(bundled("llama2-7b-trn1"), 1'000'000);
  CHECK(p.world_size == 128);  // 4 x 32
  CHECK(p.dp == 16);           // 128 / 8
  CHECK(p.grad_accum == 64);   // 1024 / (1 x 16)
  CHECK(p.samples_per_rank == 62'500);
  CHECK(p.micro_steps_per_epoch == 62'500);
  CHECK(p.steps_per_epoch == 976);  // floor(62500 / 64)
  CHECK(p.total_steps == 976);
  CHECK(p.warmup_steps == 100);  // fixed in the recipe, as published
  CHECK(p.samples_dropped_per_epoch == 1'000'000 - 976 * 1024);
  CHECK(p.kv_size_multiplier == 1);
  CHECK(p.checkpoint_every == 1000);
  CHECK(has_warning(p, "checkpoint.every = 1000 exceeds the 976 total steps"));
}

TEST_CASE("plan: the steps after the last multiple of checkpoint.every are named") {
  // 2929 total steps (below): the trainer saves at 1000 and 2000, never at the end.
  const Plan p = plan_of(bundled("llama2-7b-trn1", {{"train.epochs", "3", ""}}), 1'000'000);
  CHECK(has_warning(p, "the last 929 steps are never saved and convert_back exports step 2000"));
  const Plan whole = plan_of(bundled("llama2-7b-trn1", {{"checkpoint.every", "976", ""}}), 1'000'000);
  CHECK_FALSE(has_warning(whole, "never saved"));
}

TEST_CASE("plan: the micro-step counter carries across epochs") {
  // 3 epochs of 62500 micro-steps: floor(187500 / 64) = 2929, one more than 3 x 976.
  const Plan p = plan_of(bundled("llama2-7b-trn1", {{"train.epochs", "3", ""}}), 1'000'000);
  CHECK(p.steps_per_epoch == 976);
  CHECK(p.total_steps == 2929);
  CHECK(p.epochs == 3);
}

TEST_CASE("plan: arcee's Llama2-7B on 16 nodes gives its 31800 steps and ~1% warmup") {
  // 16 nodes, TP 8, GBS 2048: DP 64, ACC 32. 21,708,800 samples = 64 x 339,200; 339,200 / 32 = 10600.
  const Recipe r = bundled("llama2-7b-trn1", {{"cluster.nodes", "16", ""},
                                              {"train.gbs", "2048", ""},
                                              {"train.epochs", "3", ""},
                                              {"train.warmup_ratio", "0.01", ""}});
  const Plan p = plan_of(r, 21'708'800);
  CHECK(p.dp == 64);
  CHECK(p.grad_accum == 32);
  CHECK(p.steps_per_epoch == 10'600);
  CHECK(p.total_steps == 31'800);
  CHECK(p.warmup_steps == 106);  // ceil(0.01 x 10600), not 107 from 106.00000000000001
  // One sample fewer per rank drops a whole micro-step: 10599 steps, not arcee's float 10599.99.
  CHECK(plan_of(r, 21'708'800 - 1).steps_per_epoch == 10'599);
}

TEST_CASE("plan: warmup is a ratio of one epoch, rounded up, never above the total") {
  const Recipe r = bundled("tiny-cpu");  // DP 4, ACC 2, warmup_ratio 0.01
  Plan p = plan_of(r, 1000);             // 250 micro-steps, 125 steps
  CHECK(p.steps_per_epoch == 125);
  CHECK(p.warmup_steps == 2);  // ceil(1.25)
  p = plan_of(bundled("tiny-cpu", {{"train.warmup_steps", "500", ""}}), 1000);
  CHECK(p.warmup_steps == 125);
  CHECK(has_warning(p, "warmup of 500 steps exceeds the 125 total steps"));
  p = plan_of(bundled("tiny-cpu", {{"train.warmup_ratio", "0", ""}}), 1000);
  CHECK(p.warmup_steps == 0);
}

TEST_CASE("plan: Megatron samples are (tokens - 1) // seq_len") {
  auto s = dataset_size_from_tokens(4096 * 1000 + 1, 4096);
  REQUIRE(s.has_value());
  CHECK(s->samples == 1000);
  CHECK(s->tokens == 4096u * 1000 + 1);
  CHECK(dataset_size_from_tokens(4096 * 1000, 4096)->samples == 999);
  CHECK_FALSE(dataset_size_from_tokens(4096, 4096).has_value());
  CHECK_FALSE(dataset_size_from_tokens(0, 4096).has_value());
  const Plan p = *make_plan(bundled("tiny-cpu"), *dataset_size_from_tokens(32 * 1000 + 1, 32));
  CHECK(p.dataset.samples == 1000);
  CHECK(p.steps_per_epoch == 125);
}

TEST_CASE("plan: the published configurations") {
  struct Case {
    const char* recipe;
    std::uint64_t world, dp, acc, kv_multiplier;
    std::uint32_t cores;
  };
  const Case cases[] = {
      {"llama2-7b-trn1", 128, 16, 64, 1, 32},   {"llama2-13b-trn1", 1024, 32, 32, 1, 32},
      {"llama2-70b-trn1", 1024, 4, 256, 4, 32}, {"llama3-8b-trn1", 128, 4, 256, 4, 32},
      {"llama3-8b-trn2", 64, 4, 256, 2, 64},    {"llama3-70b-trn1", 1024, 4, 256, 4, 32},
      {"llama3-70b-trn2", 512, 4, 256, 4, 64},
  };
  for (const auto& c : cases) {
    INFO(c.recipe);
    const Plan p = plan_of(bundled(c.recipe), 10'000'000);
    CHECK(p.cores_per_node == c.cores);
    CHECK(p.world_size == c.world);
    CHECK(p.dp == c.dp);
    CHECK(p.grad_accum == c.acc);
    CHECK(p.kv_size_multiplier == c.kv_multiplier);
    CHECK(p.steps_per_epoch == 10'000'000 / c.dp / c.acc);
    CHECK(p.memory.fits());
    CHECK(has_warning(p, "exceeds the") == (c.kv_multiplier > 1 || p.checkpoint_every > p.total_steps));
  }
}

TEST_CASE("plan: every bundled recipe loads and plans") {
  const auto all = bundled_recipes();
  CHECK(all.size() >= 8);
  for (const auto& b : all) {
    INFO(b.name);
    CHECK_FALSE(b.summary.empty());
    auto r = load_recipe_text(b.text, std::string(b.name) + ".toml");
    REQUIRE(r.has_value());
    auto p = make_plan(*r, rows(10'000'000));
    REQUIRE(p.has_value());
    CHECK(p->total_steps > 0);
    for (const auto& s : r->stages)
      if (s.enabled) CHECK((!s.command.empty() || !s.script.empty()));
  }
  CHECK(find_bundled_recipe("tiny-cpu") != nullptr);
  CHECK(find_bundled_recipe("nope") == nullptr);
}

TEST_CASE("plan: refusals say what and suggest the nearest valid values") {
  SECTION("TP must divide the cores of a node") {
    const Error e = refusal(bundled("llama2-7b-trn1", {{"train.tp", "12", ""}}), 1'000'000);
    CHECK(e.what == "tp = 12 does not divide the 32 cores of a trn1.32xlarge node");
    CHECK(e.where == "--set train.tp");
    CHECK(e.hint == "use tp = 8 or 16");
  }
  SECTION("TP must divide the attention heads") {
    const Error e = refusal(bundled("llama2-13b-trn1", {{"train.tp", "32", ""}}), 1'000'000);
    CHECK(e.what == "tp = 32 does not divide the model's 40 attention heads");
    CHECK(e.hint == "use tp = 8");
  }
  SECTION("the world must be a multiple of TP x PP") {
    const Error e = refusal(bundled("llama2-70b-trn1", {{"cluster.nodes", "12", "--nodes"}}), 1'000'000);
    CHECK(e.what == "world size 384 (12 nodes x 32 cores) is not a multiple of tp x pp = 256");
    CHECK(e.where == "--nodes");
    CHECK(e.hint == "use nodes = 8 or 16 (a multiple of 8), or a smaller pp");
  }
  SECTION("GBS must be a multiple of MBS x DP") {
    const Error e = refusal(bundled("llama2-7b-trn1", {{"cluster.nodes", "3", ""}}), 1'000'000);
    CHECK(e.what == "gbs = 1024 is not a multiple of mbs x dp = 1 x 12 = 12");
    CHECK_THAT(e.hint, Catch::StartsWith("use gbs = 1020 or 1032"));
    CHECK_THAT(e.where, Catch::EndsWith("llama2-7b-trn1.toml:27:7"));
  }
  SECTION("a GBS below MBS x DP suggests the smallest valid one") {
    const Error e = refusal(bundled("llama2-7b-trn1", {{"train.gbs", "8", ""}}), 1'000'000);
    CHECK_THAT(e.hint, Catch::StartsWith("use gbs = 16;"));
  }
  SECTION("a dataset too small for one optimizer step") {
    const Error e = refusal(bundled("llama2-7b-trn1"), 1000);  // 62 micro-steps < 64
    CHECK_THAT(e.what, Catch::Contains("62 micro-steps per DP rank per epoch, fewer than the 64"));
    CHECK_THAT(e.hint, Catch::Contains("at least 1024 samples"));
  }
  SECTION("no samples") {
    CHECK_THAT(refusal(bundled("tiny-cpu"), 0).what, Catch::Contains("no samples"));
  }
}

TEST_CASE("plan: an epoch shorter than one step still counts the carried micro-steps") {
  // 1000 samples: 62 micro-steps per epoch, 0 steps per epoch, 2 epochs = floor(124 / 64) = 1.
  const Plan p = plan_of(bundled("llama2-7b-trn1", {{"train.epochs", "2", ""}}), 1000);
  CHECK(p.steps_per_epoch == 0);
  CHECK(p.total_steps == 1);
  CHECK(has_warning(p, "one epoch is shorter than one optimizer step"));
}

TEST_CASE("plan: kv-head warnings") {
  CHECK(has_warning(plan_of(bundled("llama3-8b-trn1"), 10'000'000), "kv_size_multiplier = 4"));
  // tiny: 2 kv heads; TP 4 would need 4 cores per node.
  const Plan p =
      plan_of(bundled("tiny-cpu", {{"cluster.cores_per_node", "4", ""}, {"train.tp", "4", ""}}), 1000);
  CHECK(p.kv_size_multiplier == 2);
  // Llama3-8B (8 kv heads) with TP 16 on trn1 divides evenly; TP 32 on 12 kv heads would not.
  const Plan odd = plan_of(bundled("tiny-cpu", {{"model.heads", "12", ""},
                                                {"model.kv_heads", "6", ""},
                                                {"model.hidden", "96", ""},
                                                {"cluster.cores_per_node", "4", ""},
                                                {"train.tp", "4", ""}}),
                           1000);
  CHECK(has_warning(odd, "does not divide the 6 kv heads"));
}

TEST_CASE("plan: memory per NeuronCore") {
  SECTION("parameter counts match the published models") {
    CHECK(plan_of(bundled("llama2-7b-trn1"), 10'000'000).memory.parameters == 6'738'415'616);
    CHECK(plan_of(bundled("llama2-70b-trn1"), 10'000'000).memory.parameters == 68'976'648'192);
    CHECK(plan_of(bundled("llama3-8b-trn1"), 10'000'000).memory.parameters == 8'030'261'248);
  }
  SECTION("Llama2-7B with TP 8 on 4 trn1 nodes fits in 16 GiB") {
    const auto m = plan_of(bundled("llama2-7b-trn1"), 10'000'000).memory;
    CHECK(m.capacity == 16ull << 30);
    CHECK(m.fits());
    // bf16 weights of 1/8 of the layers plus vocab shards: ~0.84 G parameters per core.
    CHECK(m.parameters_per_core == Approx(842'000'000).epsilon(0.01));
    CHECK(m.weights == 2 * m.parameters_per_core);
    CHECK(m.optimizer == (12 * m.parameters_per_core + 15) / 16);
    // 34 s b h / t per layer, 32 layers, plus fp32 logits 4 s b v / t.
    CHECK(m.activations == 34ull * 4096 * 4096 / 8 * 32 + 4ull * 4096 * 32000 / 8);
  }
  SECTION("Llama2-70B with TP 8, PP 1 on 4 trn1 nodes does not, and says so with the numbers") {
    const Recipe r = bundled("llama2-70b-trn1", {{"cluster.nodes", "4", ""},
                                                 {"train.tp", "8", ""},
                                                 {"train.pp", "1", ""},
                                                 {"train.gbs", "1024", ""}});
    const Plan p = plan_of(r, 10'000'000);
    CHECK_FALSE(p.memory.fits());
    CHECK(p.memory.weights > (16ull << 30));  // the bf16 weights alone
    CHECK(has_warning(p, "exceeds the 16.0 GiB of a trn1.32xlarge core: weights"));
  }
  SECTION("trn2 cores hold 24 GiB at LNC=2 and 12 GiB at LNC=1") {
    CHECK(plan_of(bundled("llama3-8b-trn2"), 10'000'000).memory.capacity == 24ull << 30);
    CHECK(memory_per_core_bytes(*bundled_instances().find("trn2.48xlarge"), 1) == 12ull << 30);
  }
  SECTION("cpu has no device memory limit") {
    const auto m = plan_of(bundled("tiny-cpu"), 1000).memory;
    CHECK(m.capacity == 0);
    CHECK(m.fits());
  }
}

TEST_CASE("plan: every bundled instance type, at each LNC it accepts") {
  for (const auto& type : bundled_instances().types()) {
    if (type.cpu()) continue;
    for (const std::uint32_t lnc : *type.lnc.value) {
      INFO(type.name << " at LNC " << lnc);
      const std::uint32_t cores = type.physical_cores() / lnc;
      const std::uint32_t tp = std::gcd(cores, 32U);  // divides the cores of a node and Llama3's 32 heads
      // Off trn2 NxD's converter cannot shard TP below the 8 kv heads (test_plan_nxd.cpp): the
      // converting stages are off here, where only the instance's figures are looked at.
      const Recipe r = bundled("llama3-8b-trn2", {{"cluster.instance", type.name, ""},
                                                  {"cluster.lnc", std::to_string(lnc), ""},
                                                  {"train.tp", std::to_string(tp), ""},
                                                  {"stages.convert.enabled", "false", ""},
                                                  {"stages.convert_back.enabled", "false", ""}});
      const Plan p = plan_of(r, 10'000'000);
      CHECK(p.instance_origin == "bundled");
      CHECK(p.backend == *type.target.value);
      CHECK(p.lnc == lnc);
      CHECK(p.cores_per_node == *type.devices.value * *type.cores_per_device.value / lnc);
      CHECK(p.world_size == p.cores_per_node);
      CHECK(p.dp == p.cores_per_node / tp);
      // HBM of the node over its logical cores: an LNC=2 core holds twice an LNC=1 core's.
      CHECK(p.memory.capacity ==
            static_cast<std::uint64_t>(*type.hbm_gib_per_device.value * *type.devices.value) * (1ull << 30) /
                p.cores_per_node);
      REQUIRE(p.step_floor.has_value());
      CHECK(p.step_floor->peak_flops ==
            Approx(*type.bf16_tflops_per_device.value * 1e12 * *type.devices.value));
      CHECK(p.step_floor->seconds ==
            Approx(6.0 * static_cast<double>(p.memory.parameters) * 1024 * 8192 / p.step_floor->peak_flops));
      const bool unconfirmed =
          !unconfirmed_figures(type, {"devices", "cores_per_device", "lnc", "lnc_default",
                                      "hbm_gib_per_device", "ultraserver_nodes", "bf16_tflops_per_device"})
               .empty();
      CHECK(has_warning(p, "no public source confirms") == unconfirmed);
      CHECK(p.placement.method == "none");  // one node: nothing to keep together
    }
  }
  // The LNC-dependent figures, by hand: trn2 and trn3 at LNC 1 and 2.
  const auto at = [&](const char* instance, const char* lnc) {
    return plan_of(bundled("llama3-8b-trn2", {{"cluster.instance", instance, ""}, {"cluster.lnc", lnc, ""}}),
                   10'000'000);
  };
  CHECK(at("trn2.48xlarge", "2").cores_per_node == 64);
  CHECK(at("trn2.48xlarge", "1").cores_per_node == 128);
  CHECK(at("trn2.48xlarge", "1").memory.capacity == 12ull << 30);
  CHECK(at("trn3.48xlarge", "2").cores_per_node == 64);
  CHECK(at("trn3.48xlarge", "2").memory.capacity == 36ull << 30);
  CHECK(at("trn3.48xlarge", "1").cores_per_node == 128);
  CHECK(at("trn3.48xlarge", "1").memory.capacity == 18ull << 30);
  CHECK(at("trn3.48xlarge", "2").backend == "trn3");
  CHECK(plan_of(bundled("llama3-8b-trn2", {{"cluster.instance", "trn2.3xlarge", ""}, {"train.tp", "4", ""}}),
                10'000'000)
            .cores_per_node == 4);
  // The recipe's lnc = 2 on a type that accepts only 1 is refused where it is written.
  const auto trn1 = load_recipe_text(find_bundled_recipe("llama3-8b-trn2")->text, "r.toml",
                                     {{"cluster.instance", "trn1.32xlarge", ""}});
  REQUIRE_FALSE(trn1.has_value());
  CHECK(to_string(trn1.error()) ==
        "r.toml:23:7: lnc = 2 is not valid on trn1.32xlarge (trn1.32xlarge supports only lnc = 1)");
}

TEST_CASE("plan: UltraServer types keep TP x PP groups that span servers in one UltraServer") {
  // Llama3-70B at TP 32 PP 4 on trn2u at LNC 2: 128 cores per group, two 64-core servers.
  const std::vector<Override> base{{"cluster.instance", "trn2u.48xlarge", ""}, {"cluster.nodes", "4", ""}};
  auto with = [&](std::vector<Override> more) {
    auto all = base;
    all.insert(all.end(), more.begin(), more.end());
    return plan_of(bundled("llama3-70b-trn2", all), 10'000'000);
  };
  const Plan none = with({});
  CHECK(none.placement.group_nodes == 2);
  CHECK(none.placement.method == "none");  // Slurm 22.05 here: a feature is needed, none was given
  CHECK(has_warning(none, "slurm.ultraserver_features names no node feature"));
  const Plan features = with({{"slurm.ultraserver_features", "[\"us1\", \"us2\"]", ""}});
  CHECK(features.placement.method == "constraint");
  CHECK(features.placement.sbatch_args == std::vector<std::string>{"--constraint=[us1|us2]"});
  CHECK(features.placement.why.find("no --segment (added in 24.05)") != std::string::npos);
  const Plan segment = with({{"slurm.ultraserver_placement", "segment", ""}});
  CHECK(segment.placement.sbatch_args == std::vector<std::string>{"--segment=2"});
  CHECK(has_warning(segment, "--segment needs Slurm 24.05 or later"));
  const auto j = to_json(features);
  CHECK(j.at("placement").at("sbatch_args") == nlohmann::json::array({"--constraint=[us1|us2]"}));
  // Eight nodes are two UltraServers: a constraint cannot split the job by groups.
  const Plan eight = with({{"cluster.nodes", "8", ""}, {"slurm.ultraserver_features", "[\"us*\"]", ""}});
  CHECK(eight.placement.method == "none");
  CHECK(has_warning(eight, "8 nodes are more than one 4-server UltraServer"));
  // trn2.48xlarge is no UltraServer: no placement whatever the groups.
  CHECK(plan_of(bundled("llama3-70b-trn2"), 10'000'000).placement.why ==
        "trn2.48xlarge is not part of an UltraServer");
}

TEST_CASE("plan: wall time and cost from the recipe's throughput and price") {
  // tiny-cpu, one epoch: 125 steps x 8 x 32 tokens = 32000 tokens at 20000 tokens/s/node on 2 nodes.
  const Plan p = plan_of(
      bundled("tiny-cpu", {{"train.epochs", "1", ""}, {"estimate.tokens_per_second_per_node", "20000", ""}}),
      1000);
  REQUIRE(p.cost.has_value());
  CHECK(p.cost->tokens == Approx(32000));
  CHECK(p.cost->hours == Approx(32000.0 / 40000 / 3600));
  CHECK(p.cost->node_hours == Approx(2 * 32000.0 / 40000 / 3600));
  REQUIRE(p.cost->cost.has_value());
  CHECK(*p.cost->cost == Approx(0.10 * 2 * 32000.0 / 40000 / 3600));
  CHECK_FALSE(plan_of(bundled("llama2-7b-trn1"), 10'000'000).cost.has_value());
  const Plan no_price = plan_of(bundled("tiny-cpu", {{"estimate.price_per_node_hour", "0", ""}}), 1000);
  REQUIRE(no_price.cost.has_value());
  CHECK_FALSE(no_price.cost->cost.has_value());
}

TEST_CASE("plan: the JSON has every key the contract and the stage templates name") {
  const Plan p = plan_of(bundled("llama3-8b-trn2", {{"train.epochs", "2", ""}}), 10'000'000);
  const auto j = to_json(p);
  for (const char* key : {"samples",
                          "tokens",
                          "world_size",
                          "dp",
                          "grad_accum",
                          "steps_per_epoch",
                          "total_steps",
                          "warmup_steps",
                          "epochs",
                          "nodes",
                          "cores_per_node",
                          "tp",
                          "pp",
                          "gbs",
                          "mbs",
                          "seq_len",
                          "instance",
                          "lnc",
                          "hw_backend",
                          "layers",
                          "kv_size_multiplier",
                          "lr",
                          "dataset_path",
                          "checkpoint_dir",
                          "checkpoint_every",
                          "converted_dir",
                          "export_dir",
                          "pretrained",
                          "model_name",
                          "memory",
                          "warnings"})
    CHECK(j.contains(key));
  CHECK(j["total_steps"] == p.total_steps);
  CHECK(j["dp"] == 4);
  CHECK(j["cores_per_node"] == 64);
  CHECK(j["lnc"] == 2);
  CHECK(j["instance"] == "trn2.48xlarge");
  CHECK(j["hw_backend"] == "trn2");
  CHECK(j["tokens"].is_null());
  CHECK(j["epochs"] == 2);
  CHECK(j["kv_size_multiplier"] == 2);
}

TEST_CASE("plan: every placeholder of every bundled recipe is a key of the plan JSON") {
  // Set by the chain itself, not the plan (docs/chain.md): the rest must come from the plan or
  // be a "section.key" of the recipe.
  const std::set<std::string> chain_values{"chain_id", "run_dir", "stage", "backend_dir",
                                           "newest_checkpoint"};
  for (const auto& b : bundled_recipes()) {
    INFO(b.name);
    const Recipe r = *load_recipe_text(b.text, std::string(b.name));
    const auto j = to_json(*make_plan(r, rows(10'000'000)));
    for (const auto& s : r.stages) {
      std::string text = s.command;
      for (const auto& w : s.args) text += " " + w.text;
      std::string_view c = text;
      for (auto open = c.find("{{"); open != std::string_view::npos; open = c.find("{{", open + 2)) {
        const auto close = c.find("}}", open);
        REQUIRE(close != std::string_view::npos);
        const std::string key(c.substr(open + 2, close - open - 2));
        INFO(key);
        CHECK((j.contains(key) || chain_values.contains(key) || r.values.contains(key)));
      }
    }
  }
}

TEST_CASE("plan: the explanation names each figure and its inputs") {
  const auto lines = explain(plan_of(bundled("llama2-7b-trn1"), 1'000'000));
  const auto find = [&](const std::string& name) {
    const auto it = std::ranges::find(lines, name, &PlanLine::name);
    REQUIRE(it != lines.end());
    return *it;
  };
  CHECK(find("dp").from == "world_size 128 / (tp 8 x pp 1)");
  CHECK(find("grad_accum").from == "gbs 1024 / (mbs 1 x dp 16)");
  CHECK(find("steps_per_epoch").value == "976");
  CHECK(find("total_steps").from == "floor(epochs 1 x 62500 / 64): micro-steps carry across epochs");
  CHECK_THAT(find("memory_per_core").from, Catch::Contains("of 16.0 GiB per core"));
}

TEST_CASE("plan: absurd shapes saturate the estimate instead of wrapping around") {
  const Plan p = plan_of(bundled("tiny-cpu", {{"model.layers", "100000", ""},
                                              {"model.hidden", "16777216", ""},
                                              {"model.heads", "1", ""},
                                              {"model.kv_heads", "1", ""},
                                              {"model.ffn_hidden", "67108864", ""},
                                              {"model.vocab", "67108864", ""},
                                              {"model.seq_len", "16777216", ""}}),
                         1000);
  CHECK(p.memory.total == std::numeric_limits<std::uint64_t>::max());
  const Plan trn = plan_of(bundled("llama2-7b-trn1", {{"model.layers", "100000", ""},
                                                      {"model.hidden", "16777216", ""},
                                                      {"model.heads", "8", ""},
                                                      {"model.kv_heads", "8", ""}}),
                           10'000'000);
  CHECK_FALSE(trn.memory.fits());
}

TEST_CASE("plan: epochs that would overflow the step counter are refused") {
  const Error e = refusal(bundled("tiny-cpu", {{"train.epochs", "1000000", ""}, {"train.gbs", "4", ""}}),
                          std::numeric_limits<std::uint64_t>::max());
  CHECK_THAT(e.what, Catch::Contains("overflow a 64-bit step counter"));
  CHECK(e.where == "--set train.epochs");
}
