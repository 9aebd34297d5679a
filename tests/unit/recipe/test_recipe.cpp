#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "fixtures.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"
#include "trnslurm/recipe/recipe.hpp"

using namespace trnslurm;

namespace {

// Loads a fixture that must fail; returns the error.
Error error_of(const std::string& name, const std::vector<Override>& overrides = {}) {
  auto r = load_recipe(test::fixture("recipes/" + name), overrides);
  REQUIRE_FALSE(r.has_value());
  return r.error();
}
}  // namespace

TEST_CASE("recipe: a complete recipe loads every key") {
  auto r = load_recipe(test::fixture("recipes/valid.toml"));
  REQUIRE(r.has_value());
  const Recipe& recipe = *r;
  CHECK(recipe.source == test::fixture("recipes/valid.toml"));
  CHECK(recipe.model.layers == 32);
  CHECK(recipe.model.hidden == 4096);
  CHECK(recipe.model.heads == 32);
  CHECK(recipe.model.kv_heads == 8);
  CHECK(recipe.model.ffn_hidden == 14336);
  CHECK(recipe.model.vocab == 32000);
  CHECK(recipe.model.seq_len == 4096);
  CHECK(recipe.model.pretrained == "/models/hf");
  CHECK(recipe.cluster.instance == "trn2.48xlarge");
  CHECK(recipe.cluster.nodes == 2);
  CHECK(recipe.cluster.lnc == 2);
  CHECK(recipe.cluster.cores_per_node == 64u);
  CHECK(recipe.train.tp == 16);
  CHECK(recipe.train.pp == 2);
  CHECK(recipe.train.gbs == 512);
  CHECK(recipe.train.mbs == 2);
  CHECK(recipe.train.epochs == 3);
  CHECK(recipe.train.lr == Approx(1.5e-4));
  CHECK(recipe.train.warmup_ratio == Approx(0.02));
  CHECK_FALSE(recipe.train.warmup_steps.has_value());
  CHECK(recipe.dataset.path == "/data/train");
  CHECK(recipe.dataset.format == "hf-dict");
  CHECK(recipe.dataset.split == "validation");
  CHECK(recipe.checkpoint.dir == "/ckpt");
  CHECK(recipe.checkpoint.converted_dir == "/ckpt/pretrained");
  CHECK(recipe.checkpoint.export_dir == "/export");
  CHECK(recipe.checkpoint.every == 500);
  CHECK(recipe.estimate.tokens_per_second_per_node == Approx(100000));
  CHECK(recipe.estimate.price_per_node_hour == Approx(44.5));
  CHECK(recipe.run.runs_dir == trnslurm::test::fixtures_dir() + "/recipes/my-runs");  // beside the recipe
  CHECK(recipe.slurm.partition == "trn");
  CHECK(recipe.slurm.account == "ml");
  CHECK(recipe.slurm.qos == "high");
  CHECK_FALSE(recipe.slurm.exclusive);
  CHECK(recipe.slurm.sbatch_args == std::vector<std::string>{"--mail-type=END", "--comment=x y"});

  REQUIRE(recipe.stages.size() == 4);
  CHECK(recipe.stages[0].name == "convert");
  CHECK(recipe.stages[1].name == "precompile");
  CHECK(recipe.stages[2].name == "train");
  CHECK(recipe.stages[3].name == "convert_back");
  CHECK_FALSE(recipe.stage("convert").enabled);
  CHECK(recipe.stage("convert").time == "30");
  CHECK(recipe.stage("convert").nodes == 1);
  CHECK(recipe.stage("precompile").nodes == 2);
  CHECK(recipe.stage("precompile").time == "1-00:00:00");
  CHECK(recipe.stage("precompile").command == "precompile {{nodes}}\n");
  const auto& train = recipe.stage("train");
  CHECK(train.nodes == 2);  // defaults to cluster.nodes
  CHECK(train.command == "train {{total_steps}}\n");
  CHECK(train.env == std::map<std::string, std::string>{{"FI_PROVIDER", "efa"}, {"MALLOC_ARENA_MAX", "64"}});
  CHECK(to_string(train.command_pos) == test::fixture("recipes/valid.toml") + ":66:11");
  CHECK(recipe.stage("convert_back").nodes == 1);
  CHECK(recipe.stage("convert_back").time == "01:00:00");
  CHECK(recipe.where("train.tp") == test::fixture("recipes/valid.toml") + ":19:6");
  CHECK(recipe.text.starts_with("# A complete, valid recipe"));
}

TEST_CASE("recipe: the required keys alone get the documented defaults") {
  auto r = load_recipe(test::fixture("recipes/minimal.toml"));
  REQUIRE(r.has_value());
  CHECK(r->model.kv_heads == 32);       // = heads
  CHECK(r->model.ffn_hidden == 11008);  // Llama rule for hidden 4096
  CHECK(r->cluster.lnc == 1);
  CHECK(r->cluster.cores_per_node == 32u);
  CHECK(r->train.pp == 1);
  CHECK(r->train.mbs == 1);
  CHECK(r->train.epochs == 1);
  CHECK(r->train.warmup_ratio == Approx(0.01));
  CHECK(r->dataset.format == "auto");
  CHECK(r->dataset.split == "train");
  CHECK(r->checkpoint.every == 0);
  CHECK(r->run.runs_dir == trnslurm::test::fixtures_dir() + "/recipes/runs");
  CHECK(r->checkpoint.dir == trnslurm::test::fixtures_dir() + "/recipes/checkpoints");
  CHECK(r->slurm.partition.empty());
  CHECK(r->slurm.exclusive);
  CHECK(r->slurm.sbatch_args.empty());
  for (const auto& s : r->stages) {
    CHECK(s.enabled);
    CHECK(s.time == "01:00:00");
    CHECK(s.env.empty());
  }
  CHECK(r->stage("convert").nodes == 1);
  CHECK(r->stage("precompile").nodes == 4);
  CHECK(r->stage("train").nodes == 4);
  CHECK(r->stage("convert_back").nodes == 1);
}

TEST_CASE("recipe: every error names file:line:column and how to fix it") {
  struct Case {
    const char* file;
    const char* position;  // line:column
    const char* what;
    const char* hint;
  };
  const Case cases[] = {
      {"syntax_error.toml", "12:9", "could not determine value type", "TOML syntax"},
      {"unknown_key.toml", "3:1", "unknown key 'layres' in [model]", "did you mean 'layers'?"},
      {"unknown_section.toml", "14:2", "unknown section 'trian'", "did you mean 'train'?"},
      {"unknown_stage.toml", "27:9", "unknown key 'trian' in [stages]", "did you mean 'train'?"},
      {"misplaced_key.toml", "9:1", "unknown key 'tp' in [model]", "'tp' belongs in [train]"},
      {"wrong_type.toml", "4:10", "model.hidden must be an integer, got a string",
       "remove the quotes: `hidden = 4096`"},
      {"missing_key.toml", "1:1", "missing model.vocab", "add `vocab = 32000` to the [model] section"},
      {"bad_instance.toml", "11:12", "unknown instance type 'trn1.32xlarg'", "did you mean 'trn1.32xlarge'?"},
      {"bad_lnc.toml", "13:7", "lnc = 2 is not valid on trn1.32xlarge", "supports only lnc = 1"},
      {"out_of_range.toml", "12:9", "cluster.nodes = 0 is out of range", "from 1 to"},
      {"both_warmup.toml", "19:16", "both warmup_steps and warmup_ratio are set", "keep one"},
      {"stage_nodes.toml", "24:9", "stages.train.nodes = 2 differs from cluster.nodes = 4",
       "set cluster.nodes"},
      {"bad_time.toml", "24:8", "'1 hour' is not a Slurm time limit", "HH:MM:SS"},
      {"bad_env.toml", "24:9", "'1BAD' is not a valid environment variable name",
       "not starting with a digit"},
      {"empty_command.toml", "22:11", "stage precompile is enabled but has no command", "enabled = false"},
      {"bad_format.toml", "21:10", "unknown dataset format 'megatorn'", "did you mean 'megatron'?"},
      {"cpu_no_cores.toml", "11:12", "instance 'cpu' needs cores_per_node", "cluster.cores_per_node"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    const Error e = error_of(c.file);
    CHECK(e.where == test::fixture(std::string("recipes/") + c.file) + ":" + c.position);
    CHECK_THAT(e.what, Catch::Contains(c.what));
    CHECK_THAT(e.hint, Catch::Contains(c.hint));
  }
}

TEST_CASE("recipe: a missing file says how to get one") {
  const Error e = error_of("no-such-recipe.toml");
  CHECK(e.where == test::fixture("recipes/no-such-recipe.toml"));
  CHECK_THAT(e.hint, Catch::Contains("trnslurm init"));
}

TEST_CASE("recipe: overrides are applied before validation and type-checked") {
  SECTION("values of every type replace the file's") {
    auto r =
        load_recipe(test::fixture("recipes/minimal.toml"), {{"cluster.nodes", "8", "--nodes"},
                                                            {"train.lr", "1e-5", ""},
                                                            {"slurm.exclusive", "false", ""},
                                                            {"dataset.path", "/other", "--dataset"},
                                                            {"slurm.sbatch_args", R"(["--a", "--b"])", ""},
                                                            {"stages.train.env.FOO", "bar baz", ""},
                                                            {"stages.convert.enabled", "false", ""}});
    REQUIRE(r.has_value());
    CHECK(r->cluster.nodes == 8);
    CHECK(r->stage("train").nodes == 8);  // follows cluster.nodes
    CHECK(r->train.lr == Approx(1e-5));
    CHECK_FALSE(r->slurm.exclusive);
    CHECK(r->dataset.path == "/other");
    CHECK(r->slurm.sbatch_args == std::vector<std::string>{"--a", "--b"});
    CHECK(r->stage("train").env.at("FOO") == "bar baz");
    CHECK_FALSE(r->stage("convert").enabled);
    CHECK(r->where("cluster.nodes") == "--nodes");
    // The resolved text holds the overrides and loads back to the same values.
    auto again = load_recipe_text(r->text, "resolved.toml");
    REQUIRE(again.has_value());
    CHECK(again->cluster.nodes == 8);
    CHECK(again->dataset.path == "/other");
    CHECK(again->stage("train").env.at("FOO") == "bar baz");
  }
  SECTION("a value of the wrong type is refused, naming the option") {
    auto r = load_recipe(test::fixture("recipes/minimal.toml"), {{"cluster.nodes", "four", "--nodes"}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where == "--nodes");
    CHECK_THAT(r.error().what, Catch::Contains("is not an integer"));
    r = load_recipe(test::fixture("recipes/minimal.toml"), {{"slurm.exclusive", "yes", ""}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where == "--set slurm.exclusive");
    CHECK_THAT(r.error().hint, Catch::Contains("=true"));
    r = load_recipe(test::fixture("recipes/minimal.toml"), {{"slurm.sbatch_args", "--a", ""}});
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().what, Catch::Contains("an array of strings"));
  }
  SECTION("an override is validated like the file: the error names the option") {
    auto r = load_recipe(test::fixture("recipes/minimal.toml"), {{"cluster.nodes", "0", "--nodes"}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where == "--nodes");
    CHECK_THAT(r.error().what, Catch::Contains("out of range"));
  }
  SECTION("an unknown key gets a did-you-mean") {
    auto r = load_recipe(test::fixture("recipes/minimal.toml"), {{"train.gsb", "8", ""}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where == "--set train.gsb");
    CHECK(r.error().hint == "did you mean 'train.gbs'?");
  }
  SECTION("an override of the other warmup form wins over the file's") {
    auto r = load_recipe(test::fixture("recipes/minimal.toml"), {{"train.warmup_steps", "5", ""}});
    REQUIRE(r.has_value());
    CHECK(r->train.warmup_steps == 5u);
  }
  SECTION("parse_override splits section.key=value") {
    auto o = parse_override("stages.train.command=echo a=b");
    REQUIRE(o.has_value());
    CHECK(o->key == "stages.train.command");
    CHECK(o->value == "echo a=b");
    CHECK_FALSE(parse_override("novalue").has_value());
    CHECK_FALSE(parse_override("nosection=1").has_value());
    CHECK_FALSE(parse_override("=1").has_value());
  }
}

TEST_CASE("recipe: relative paths follow the recipe's directory, or the cwd when given on the command line") {
  auto r = load_recipe(
      test::fixture("recipes/minimal.toml"),
      {{"dataset.path", "data/../train", "--dataset"}, {"checkpoint.export_dir", "s3://bucket/out", ""}});
  REQUIRE(r.has_value());
  CHECK(r->dataset.path == (std::filesystem::current_path() / "train").string());
  CHECK(r->checkpoint.export_dir == "s3://bucket/out");
  CHECK(r->checkpoint.converted_dir == trnslurm::test::fixtures_dir() + "/recipes/converted");
}

TEST_CASE("recipe: the key list covers every section") {
  const auto keys = recipe_keys();
  for (const char* k : {"model.layers", "cluster.lnc", "train.warmup_steps", "dataset.split",
                        "checkpoint.every", "estimate.price_per_node_hour", "run.runs_dir",
                        "slurm.sbatch_args", "stages.convert_back.command", "stages.train.env"})
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
}

TEST_CASE("recipe: damaged text is an error, never a crash") {
  std::ifstream in(test::fixture("recipes/valid.toml"), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(text.size() > 500);
  std::size_t errors = 0;
  // Every prefix, and every byte replaced by characters that break TOML in different ways.
  for (std::size_t n = 0; n < text.size(); ++n)
    if (!load_recipe_text(text.substr(0, n), "cut.toml").has_value()) ++errors;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    for (const char c : {'\0', '"', '[', '=', '\n', '\xff'}) {
      std::string damaged = text;
      damaged[i] = c;
      const auto r = load_recipe_text(damaged, "damaged.toml");
      if (!r) {
        ++errors;
        CHECK_THAT(r.error().where, Catch::StartsWith("damaged.toml"));
      }
    }
  }
  CHECK(errors > text.size());  // most damage is caught, and nothing threw or crashed
}

TEST_CASE("recipe: a device is refused without reading it") {
  const auto r = load_recipe("/dev/zero");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().what == "the recipe is a character device, not a regular file: not read");
}

TEST_CASE("recipe: signal_grace must be shorter than the train stage's time limit") {
  const std::string text(find_bundled_recipe("tiny-cpu")->text);
  const auto with = [&](std::string time, std::string grace) {
    return load_recipe_text(
        text, "tiny-cpu.toml",
        {{"stages.train.time", std::move(time), ""}, {"stages.train.signal_grace", std::move(grace), ""}});
  };
  for (const char* time : {"2", "00:02:00", "2:00", "0-00:02"}) {
    INFO(time);
    const auto r = with(time, "120");
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().what, Catch::Contains("not shorter than the train stage's time limit"));
    CHECK_THAT(r.error().hint, Catch::Contains("0 to send no signal"));
    CHECK(with(time, "30").has_value());
    CHECK(with(time, "0").has_value());
  }
  CHECK(with("1-00:00:00", "65535").has_value());
  CHECK(with("", "600").has_value());           // the partition's default: sbatch decides
  CHECK(with("UNLIMITED", "600").has_value());  // likewise
}

TEST_CASE("recipe: stage time limits are the forms sbatch takes, nothing else") {
  const std::string text(find_bundled_recipe("tiny-cpu")->text);
  const auto with = [&](std::string time) {
    return load_recipe_text(text, "tiny-cpu.toml", {{"stages.convert.time", std::move(time), ""}});
  };
  for (const char* time : {"", "UNLIMITED", "unlimited", "infinite", "30", "30:15", "04:00:00", "2-0", "2-04",
                           "2-04:30", "2-04:30:15", "0-0:0:0"}) {
    INFO(time);
    CHECK(with(time).has_value());
  }
  for (const char* time :
       {"1 hour", "5:", ":5", "1::2", "1:2:3:4", "1-2:3:4:5", "1-", "-1", "+5", "1-2-3", " 5", "5 ", "0x10",
        "Unlimited", "1.5", "99999999999999999999999", "4000000000:00"}) {
    INFO(time);
    const auto r = with(time);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().what, Catch::Contains("is not a Slurm time limit"));
  }
}

TEST_CASE("recipe: every scalar of the resolved recipe is a placeholder value") {
  auto r = load_recipe(test::fixture("recipes/valid.toml"),
                       {{"train.epochs", "5", ""}, {"model.name", "it's", ""}});
  REQUIRE(r.has_value());
  const auto& v = r->values;
  CHECK(v.at("model.layers") == "32");
  CHECK(v.at("model.name") == "it's");  // overrides applied
  CHECK(v.at("train.epochs") == "5");
  CHECK(v.at("train.lr") == "0.00015");
  CHECK(v.at("estimate.price_per_node_hour") == "44.5");
  CHECK(v.at("slurm.exclusive") == "false");
  CHECK(v.at("stages.train.time") == "2-12:00:00");
  CHECK(v.at("stages.train.env.FI_PROVIDER") == "efa");
  CHECK(v.count("slurm.sbatch_args") == 0);  // arrays are not placeholders
  CHECK(v.count("model") == 0);
}

TEST_CASE("recipe: runs_dir_named_by reads only [run].runs_dir, as load_recipe resolves it") {
  const auto dir = std::filesystem::path(trnslurm::test::fixtures_dir()) / "recipes";
  CHECK(runs_dir_named_by(test::fixture("recipes/valid.toml")) ==
        load_recipe(test::fixture("recipes/valid.toml"))->run.runs_dir);
  CHECK(runs_dir_named_by(test::fixture("recipes/minimal.toml")) == dir / "runs");
  // A recipe broken elsewhere still names its runs directory.
  CHECK(runs_dir_named_by(test::fixture("recipes/bad_instance.toml")) == dir / "runs");
  CHECK(runs_dir_named_by(test::fixture("recipes/syntax_error.toml")) == dir / "runs");
  CHECK(runs_dir_named_by(test::fixture("recipes/no-such-recipe.toml")) ==
        (std::filesystem::current_path() / "runs").lexically_normal());
}

TEST_CASE("recipe: the text as written is kept beside the resolved text") {
  std::ifstream in(test::fixture("recipes/minimal.toml"), std::ios::binary);
  const std::string written{std::istreambuf_iterator<char>(in), {}};
  auto r = load_recipe(test::fixture("recipes/minimal.toml"), {{"cluster.nodes", "8", "--nodes"}});
  REQUIRE(r);
  CHECK(r->file_text == written);
  CHECK(r->text != written);
}

TEST_CASE("recipe: the compile cache defaults to a per-model directory beside the recipe, never a URL") {
  const auto* tiny = find_bundled_recipe("tiny-cpu");
  REQUIRE(tiny != nullptr);
  auto r = load_recipe(test::fixture("recipes/minimal.toml"), {{"model.name", "llama/3 8b", ""}});
  REQUIRE(r);
  CHECK(r->cache.enabled);
  CHECK(r->cache.dir == trnslurm::test::fixtures_dir() + "/recipes/neuron-cache/llama_3_8b");
  CHECK(r->cache.url.empty());
  auto s3 = load_recipe(test::fixture("recipes/minimal.toml"),
                        {{"cache.url", "s3://bucket/neuron", ""}, {"cache.dir", "/fsx/cache", ""}});
  REQUIRE(s3);
  CHECK(s3->cache.url == "s3://bucket/neuron");
  CHECK(s3->cache.dir == "/fsx/cache");
  auto bad = load_recipe_text(std::string(tiny->text) + "\n[cache]\ndir = \"s3://bucket/x\"\n", "r.toml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.starts_with("r.toml:"));
  CHECK(bad.error().hint.find("cache.url") != std::string::npos);
}

TEST_CASE("recipe: [upstream] package names the track, and the TorchTitan keys are read") {
  auto r = load_recipe(test::fixture("recipes/titan.toml"));
  REQUIRE(r.has_value());
  CHECK(r->upstream.trainer == Trainer::torchtitan);
  CHECK(r->upstream.module == "torchtitan_neuron.models.qwen3");
  CHECK(r->upstream.config == "qwen3_8b_tp4_fsdp16_sac");
  CHECK(r->train.cp == 2);
  CHECK(r->train.dp_replicate == 2);
  REQUIRE(r->train.decay_ratio.has_value());
  CHECK(*r->train.decay_ratio == Approx(0.8));
  CHECK(r->train.ac == Recompute::full);
  CHECK(r->dataset.format == "text");  // the track's only format, when not written
  CHECK(r->dataset.tokenizer == "/models/qwen3-8b");
  CHECK(r->dataset.tokens == std::optional<std::uint64_t>{1000000000});
  CHECK(r->values.at("upstream.module") == "torchtitan_neuron.models.qwen3");

  // No package, or NxD's: the legacy track, with its defaults.
  auto nxd = load_recipe(test::fixture("recipes/minimal.toml"));
  REQUIRE(nxd.has_value());
  CHECK(nxd->upstream.trainer == Trainer::nxd);
  CHECK(nxd->train.cp == 1);
  CHECK(nxd->train.dp_replicate == 1);
  CHECK_FALSE(nxd->train.decay_ratio.has_value());
  CHECK(nxd->dataset.format == "auto");
  CHECK_FALSE(nxd->dataset.tokens.has_value());
  CHECK(track_of(Trainer::nxd) == "legacy");
  CHECK(track_of(Trainer::torchtitan) == "current");
  CHECK(support_status(Trainer::nxd).find("2.28") != std::string_view::npos);
}

TEST_CASE(
    "recipe: a key of the other track, an unknown package, a missing config are refused where written") {
  const auto text = [] {
    std::ifstream in(test::fixture("recipes/titan.toml"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const auto error = [&](const std::string& from, const std::string& to) {
    auto edited = text;
    const auto at = edited.find(from);
    REQUIRE(at != std::string::npos);
    edited.replace(at, from.size(), to);
    auto r = load_recipe_text(edited, "t.toml");
    REQUIRE_FALSE(r.has_value());
    return r.error();
  };
  auto e = error("package = \"torchtitan-neuron\"", "package = \"torchtitan\"");
  CHECK(e.what == "unknown upstream package 'torchtitan'");
  CHECK(e.where == "t.toml:33:11");
  CHECK(e.hint.find("torchtitan-neuron") != std::string::npos);

  // The NxD track refuses TorchTitan's keys: cp is at line 18.
  e = error("package = \"torchtitan-neuron\"", "package = \"neuronx-distributed\"");
  CHECK(e.what == "train.cp is a torchtitan-neuron setting, and this recipe runs neuronx-distributed");
  CHECK(e.where == "t.toml:18:6");

  e = error("config = \"qwen3_8b_tp4_fsdp16_sac\"", "");
  CHECK(e.what == "the torchtitan-neuron track needs upstream.config");

  e = error("tokens = 1000000000", "tokens = 1000000000\nformat = \"hf\"");
  CHECK(e.what == "dataset format 'hf' is not one torchtitan-neuron reads");
  CHECK(e.where == "t.toml:31:10");

  e = error("tokens = 1000000000", "tokens = 0");
  CHECK(e.what == "dataset.tokens = 0 is out of range");

  e = error("ac = \"full\"", "ac = \"sac\"");
  CHECK(e.what == "unknown activation checkpointing 'sac'");
  CHECK(e.where == "t.toml:25:6");

  e = error("decay_ratio = 0.8", "decay_ratio = 1.5");
  CHECK(e.what == "train.decay_ratio = 1.5 is out of range");

  // TorchNeuron has no trn1 path.
  e = error("instance = \"trn2.48xlarge\"", "instance = \"trn1.32xlarge\"");
  CHECK(e.what.find("supports trn2 and trn3 only") != std::string::npos);
  CHECK(e.where == "t.toml:13:12");

  // NxD's hf-dict split is refused on TorchTitan; format text on NxD.
  e = error("tokens = 1000000000", "tokens = 1\nsplit = \"train\"");
  CHECK(e.what == "dataset.split is a neuronx-distributed setting, and this recipe runs torchtitan-neuron");
  auto nxd = load_recipe(test::fixture("recipes/minimal.toml"), {Override{"dataset.format", "text", ""}});
  REQUIRE_FALSE(nxd.has_value());
  CHECK(nxd.error().what.find("read by torchtitan-neuron") != std::string::npos);
}
