// Building a Recipe from its checked TOML, one named step per concern, in this order: keys,
// required values, each section's typed values, positions, relative paths, cross-checks, stages.
// Each step stops at the first error, which names file:line:column (or the --set) and a fix.
#include "recipe_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../instance/instance_toml.hpp"
#include "recipe_reader.hpp"
#include "recipe_schema.hpp"
#include "slurm_time.hpp"
#include "trnslurm/dataset/dataset.hpp"
#include "trnslurm/recipe/recompute.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm {

namespace {

Result<void> first_error(std::initializer_list<Result<void>> results) {
  for (const auto& r : results)
    if (!r) return r;
  return {};
}

Result<void> require_keys(const RecipeReader& in) {
  for (const auto& [section, key, example] :
       std::initializer_list<std::tuple<std::string_view, std::string_view, std::string_view>>{
           {"model", "layers", "32"},
           {"model", "hidden", "4096"},
           {"model", "heads", "32"},
           {"model", "vocab", "32000"},
           {"model", "seq_len", "4096"},
           {"cluster", "instance", "\"trn1.32xlarge\""},
           {"cluster", "nodes", "4"},
           {"train", "gbs", "1024"},
           {"train", "lr", "3e-4"}})
    if (auto r = in.require(section, key, example); !r) return r;
  return {};
}

Result<void> read_model(const RecipeReader& in, ModelRecipe& m) {
  in.read_string(m.name, "model", "name");
  in.read_string(m.pretrained, "model", "pretrained");
  in.read_string(m.config, "model", "config");
  if (auto r = first_error({in.read_uint(m.layers, "model", "layers", 1, 100000),
                            in.read_uint(m.hidden, "model", "hidden", 1, 1u << 24),
                            in.read_uint(m.heads, "model", "heads", 1, 1u << 16),
                            in.read_uint(m.kv_heads, "model", "kv_heads", 1, 1u << 16),
                            in.read_uint(m.ffn_hidden, "model", "ffn_hidden", 1, 1u << 26),
                            in.read_uint(m.vocab, "model", "vocab", 1, 1u << 26),
                            in.read_uint(m.seq_len, "model", "seq_len", 1, 1u << 24)});
      !r)
    return r;
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.ffn_hidden == 0) {
    // Llama: 2/3 of 4 x hidden, rounded up to a multiple of 256 (7B: 11008, 13B: 13824).
    const std::uint64_t raw = (std::uint64_t{8} * m.hidden + 2) / 3;
    m.ffn_hidden = static_cast<std::uint32_t>((raw + 255) / 256 * 256);
  }
  return {};
}

Result<void> read_cluster(const RecipeReader& in, ClusterRecipe& c) {
  in.read_string(c.instance, "cluster", "instance");
  if (auto r = first_error({in.read_uint(c.nodes, "cluster", "nodes", 1, 100000),
                            in.read_uint(c.lnc, "cluster", "lnc", 1, 64)});
      !r)
    return r;
  auto v = in.uint_value("cluster", "cores_per_node", 1, 1u << 16);
  if (!v) return std::unexpected(v.error());
  if (*v) c.cores_per_node = static_cast<std::uint32_t>(**v);
  return {};
}

Result<void> read_train(const RecipeReader& in, TrainRecipe& t) {
  if (auto r = first_error(
          {in.read_uint(t.tp, "train", "tp", 1, 1u << 16), in.read_uint(t.pp, "train", "pp", 1, 1u << 16),
           in.read_uint(t.gbs, "train", "gbs", 1, std::uint64_t{1} << 32),
           in.read_uint(t.mbs, "train", "mbs", 1, std::uint64_t{1} << 24),
           in.read_uint(t.epochs, "train", "epochs", 1, 1000000), in.read_number(t.lr, "train", "lr", 0, 10),
           in.read_number(t.warmup_ratio, "train", "warmup_ratio", 0, 1),
           in.read_uint(t.cp, "train", "cp", 1, 1u << 16),
           in.read_uint(t.dp_replicate, "train", "dp_replicate", 1, 1u << 20)});
      !r)
    return r;
  auto w = in.uint_value("train", "warmup_steps", 0, std::numeric_limits<std::uint64_t>::max());
  if (!w) return std::unexpected(w.error());
  t.warmup_steps = *w;
  if (in.find("train", "decay_ratio") != nullptr) {
    double ratio = 0;
    if (auto r = in.read_number(ratio, "train", "decay_ratio", 0, 1); !r) return r;
    t.decay_ratio = ratio;
  }
  std::string ac;
  in.read_string(ac, "train", "ac");
  if (ac.empty()) return {};
  const auto mode = recompute_named(ac);
  if (!mode)
    return fail(fmt::format("unknown activation checkpointing '{}'", ac),
                to_string(in.pos(*in.find("train", "ac"), "train.ac")),
                "use ac = \"selective\", \"full\" or \"none\": what the trainer's configuration applies "
                "(TorchTitan's activation_checkpoint.mode)");
  t.ac = *mode;
  return {};
}

// One directory per model beside the runs: "neuron-cache/<model name>", the name kept to
// characters that are safe in a path.
std::string default_cache_dir(std::string_view model_name) {
  std::string name;
  for (const char c : model_name)
    name += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.') ? c : '_';
  if (name.empty() || name == "." || name == "..") name = "model";
  return "neuron-cache/" + name;
}

Result<void> read_other_sections(const RecipeReader& in, Recipe& recipe) {
  if (auto r =
          first_error({in.read_uint(recipe.checkpoint.every, "checkpoint", "every"),
                       in.read_number(recipe.estimate.tokens_per_second_per_node, "estimate",
                                      "tokens_per_second_per_node", 0, std::numeric_limits<double>::max()),
                       in.read_number(recipe.estimate.price_per_node_hour, "estimate", "price_per_node_hour",
                                      0, std::numeric_limits<double>::max())});
      !r)
    return r;
  in.read_string(recipe.dataset.path, "dataset", "path");
  in.read_string(recipe.dataset.format, "dataset", "format");
  in.read_string(recipe.dataset.split, "dataset", "split");
  in.read_string(recipe.dataset.tokenizer, "dataset", "tokenizer");
  auto tokens = in.uint_value("dataset", "tokens", 1, std::numeric_limits<std::uint64_t>::max());
  if (!tokens) return std::unexpected(tokens.error());
  recipe.dataset.tokens = *tokens;
  in.read_string(recipe.checkpoint.dir, "checkpoint", "dir");
  in.read_string(recipe.checkpoint.converted_dir, "checkpoint", "converted_dir");
  in.read_string(recipe.checkpoint.export_dir, "checkpoint", "export_dir");
  in.read_bool(recipe.checkpoint.per_chain, "checkpoint", "per_chain");
  in.read_string(recipe.run.runs_dir, "run", "runs_dir");
  in.read_string(recipe.slurm.partition, "slurm", "partition");
  in.read_string(recipe.slurm.account, "slurm", "account");
  in.read_string(recipe.slurm.qos, "slurm", "qos");
  in.read_bool(recipe.slurm.exclusive, "slurm", "exclusive");
  if (const auto* args = in.find("slurm", "sbatch_args"))
    for (const auto& a : *args->as_array()) recipe.slurm.sbatch_args.emplace_back(a.as_string()->get());
  in.read_string(recipe.upstream.package, "upstream", "package");
  in.read_string(recipe.upstream.release, "upstream", "release");
  in.read_string(recipe.upstream.root, "upstream", "root");
  in.read_string(recipe.upstream.venv, "upstream", "venv");
  in.read_string(recipe.upstream.module, "upstream", "module");
  in.read_string(recipe.upstream.config, "upstream", "config");
  in.read_bool(recipe.cache.enabled, "cache", "enabled");
  in.read_string(recipe.cache.dir, "cache", "dir");
  in.read_string(recipe.cache.url, "cache", "url");
  if (recipe.cache.dir.empty()) recipe.cache.dir = default_cache_dir(recipe.model.name);
  in.read_string(recipe.slurm.ultraserver_placement, "slurm", "ultraserver_placement");
  if (const auto* features = in.find("slurm", "ultraserver_features"))
    for (const auto& f : *features->as_array())
      recipe.slurm.ultraserver_features.emplace_back(f.as_string()->get());
  return {};
}

// Relative paths written in the recipe are relative to the recipe's directory; those given on
// the command line, to the current directory. Jobs get absolute paths whatever their cwd.
void resolve_paths(Recipe& recipe, const std::string& file) {
  for (auto [key, value] : path_fields(recipe)) {
    const auto it = recipe.positions.find(std::string(key));
    const bool from_command_line = it != recipe.positions.end() && it->second.line == 0;
    *value = path_from(
        from_command_line ? std::filesystem::path{} : std::filesystem::path(file).parent_path(), *value);
  }
}

// The instance is known (bundled, the site's, or the recipe's own); lnc and cores_per_node
// follow from it.
Result<void> check_instance(Recipe& recipe) {
  auto& c = recipe.cluster;
  auto chosen = choose_instance(recipe.instances, c.instance, c.lnc, c.cores_per_node);
  if (!chosen) {
    // Point at the key when it was written, else at the instance that needs it.
    const auto& e = chosen.error();
    const std::string key = recipe.positions.contains(e.where) ? e.where : "cluster.instance";
    return fail(e.what, recipe.where(key), e.hint);
  }
  c.lnc = chosen->lnc;
  c.cores_per_node = chosen->cores_per_node;
  return {};
}

// A node feature as slurm.conf's Features= names it, or a prefix of them ("us*"): it goes into
// --constraint=[a|b], where '|', '&', '[', ']', '*' and ',' are operators.
bool valid_feature(std::string_view f) {
  if (f.ends_with('*')) f.remove_suffix(1);
  return !f.empty() && f.size() <= 64 && std::ranges::all_of(f, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
}

// How an UltraServer job is kept in one UltraServer (docs/instances.md).
Result<void> check_ultraserver(const Recipe& recipe) {
  static const std::vector<std::string> placements{"auto", "segment", "constraint", "none"};
  if (std::ranges::find(placements, recipe.slurm.ultraserver_placement) == placements.end())
    return fail(fmt::format("unknown ultraserver_placement '{}'", recipe.slurm.ultraserver_placement),
                recipe.where("slurm.ultraserver_placement"),
                fmt::format("use one of: {}", fmt::join(placements, ", ")));
  for (const auto& f : recipe.slurm.ultraserver_features)
    if (!valid_feature(f))
      return fail(fmt::format("'{}' is not a Slurm node feature", f),
                  recipe.where("slurm.ultraserver_features"),
                  "give feature names (letters, digits, '_', '-', '.'), or a prefix ending in '*'");
  return {};
}

Result<void> check_model_shape(const Recipe& recipe) {
  const auto& m = recipe.model;
  if (m.hidden % m.heads != 0)
    return fail(fmt::format("hidden = {} is not a multiple of heads = {}", m.hidden, m.heads),
                recipe.where("model.hidden"),
                "the head size is hidden / heads: check the model's config.json");
  if (m.heads % m.kv_heads != 0)
    return fail(fmt::format("heads = {} is not a multiple of kv_heads = {}", m.heads, m.kv_heads),
                recipe.where("model.kv_heads"),
                "grouped-query attention needs heads to be a multiple of kv_heads");
  return {};
}

// warmup_steps and warmup_ratio are two forms of one value: one of them in the file.
Result<void> check_warmup(Recipe& recipe) {
  auto& t = recipe.train;
  auto& positions = recipe.positions;
  if (t.warmup_steps && positions.contains("train.warmup_ratio")) {
    // An override on the command line wins over the other form written in the file.
    const bool steps_overridden = positions["train.warmup_steps"].line == 0;
    const bool ratio_overridden = positions["train.warmup_ratio"].line == 0;
    if (ratio_overridden && !steps_overridden) t.warmup_steps.reset();
  }
  if (t.warmup_steps && positions.contains("train.warmup_ratio") &&
      positions["train.warmup_steps"].line != 0 && positions["train.warmup_ratio"].line != 0)
    return fail("both warmup_steps and warmup_ratio are set", recipe.where("train.warmup_steps"),
                "keep one: warmup_steps (fixed) or warmup_ratio (of one epoch)");
  return {};
}

// [upstream].package names the trainer; the keys of the other track are refused, not ignored.
Result<void> check_track(Recipe& recipe) {
  auto& u = recipe.upstream;
  const auto trainer = trainer_of_package(u.package);
  if (!trainer)
    return fail(fmt::format("unknown upstream package '{}'", u.package), recipe.where("upstream.package"),
                fmt::format("use package = \"{}\" (the current track: trn2, trn3) or \"{}\" (the legacy "
                            "track: trn1, Neuron 2.28); docs/recipe.md, \"Tracks\"",
                            package_of(Trainer::torchtitan), package_of(Trainer::nxd)));
  u.trainer = *trainer;
  for (const auto& s : section_specs())
    for (const auto& k : s.keys) {
      const std::string key = fmt::format("{}.{}", s.name, k.key);
      if (k.track == KeyTrack::any || !recipe.positions.contains(key)) continue;
      const Trainer owner = k.track == KeyTrack::torchtitan ? Trainer::torchtitan : Trainer::nxd;
      if (owner == u.trainer) continue;
      return fail(fmt::format("{} is a {} setting, and this recipe runs {}", key, package_of(owner),
                              package_of(u.trainer)),
                  recipe.where(key),
                  fmt::format("remove it, or set [upstream] package = \"{}\"", package_of(owner)));
    }
  if (u.trainer != Trainer::torchtitan) return {};
  // Both select the configuration (--module, --config: required since pytorch/torchtitan 9810191bb).
  if (u.module.empty() || u.config.empty())
    return fail(fmt::format("the {} track needs upstream.{}", package_of(u.trainer),
                            u.module.empty() ? "module" : "config"),
                recipe.where("upstream.package"),
                u.module.empty()
                    ? "name the module holding the configuration: module = \"torchtitan_neuron.models.qwen3\""
                    : "name the configuration in that module: config = \"qwen3_8b_tp4_fsdp16_sac\"");
  // TorchTitan reads text (json/jsonl, parquet, arrow, csv with a `text` column) and tokenizes it
  // itself: the other formats are NxD's pre-tokenized ones.
  if (!recipe.positions.contains("dataset.format")) recipe.dataset.format = "text";
  return {};
}

// TorchTitan Neuron runs on TorchNeuron, which supports trn2 and trn3 only (Neuron 2.33 release
// notes); the CPU type runs the stand-in.
Result<void> check_track_instance(const Recipe& recipe) {
  const auto* type = recipe.instances.find(recipe.cluster.instance);
  if (recipe.upstream.trainer != Trainer::torchtitan || type == nullptr) return {};
  const auto target = type->target.value.value_or("");
  if (target == "trn1")
    return fail(fmt::format("{} is a trn1 type: TorchNeuron, which {} runs on, supports trn2 and trn3 only",
                            recipe.cluster.instance, package_of(Trainer::torchtitan)),
                recipe.where("cluster.instance"),
                fmt::format("train on trn1 with the legacy track (package = \"{}\", release = \"2.28\"; "
                            "`trnslurm recipes` lists them), or use a trn2/trn3 type",
                            package_of(Trainer::nxd)));
  return {};
}

Result<void> check_dataset_and_run(const Recipe& recipe) {
  const bool text = recipe.dataset.format == "text";
  if (recipe.upstream.trainer == Trainer::torchtitan && !text)
    return fail(fmt::format("dataset format '{}' is not one {} reads", recipe.dataset.format,
                            package_of(Trainer::torchtitan)),
                recipe.where("dataset.format"),
                "use format = \"text\": a directory of json/jsonl, parquet, arrow or csv files with a `text` "
                "column, tokenized by the trainer");
  if (recipe.upstream.trainer == Trainer::nxd && text)
    return fail(fmt::format("dataset format 'text' is read by {}; {} reads pre-tokenized data",
                            package_of(Trainer::torchtitan), package_of(Trainer::nxd)),
                recipe.where("dataset.format"),
                fmt::format("use one of: {}", fmt::join(dataset_format_names(), ", ")));
  const auto& formats = dataset_format_names();
  if (!text && std::ranges::find(formats, recipe.dataset.format) == formats.end()) {
    auto close = closest_match(recipe.dataset.format, formats);
    return fail(fmt::format("unknown dataset format '{}'", recipe.dataset.format),
                recipe.where("dataset.format"),
                close ? fmt::format("did you mean '{}'?", *close)
                      : fmt::format("use one of: {}", fmt::join(formats, ", ")));
  }
  if (recipe.run.runs_dir.empty())
    return fail("run.runs_dir is empty", recipe.where("run.runs_dir"),
                "give a directory, e.g. runs_dir = \"runs\"");
  if (recipe.cache.dir.find("://") != std::string::npos)
    return fail(
        fmt::format("cache.dir '{}' is a URL: it must be a directory the head node and the jobs share",
                    recipe.cache.dir),
        recipe.where("cache.dir"),
        "keep cache.dir on the shared file system and put the URL in cache.url = \"s3://...\"");
  return {};
}

// How a stage's upstream script is started: torchrun on every node for the stages that run on
// the job's nodes, python3 on the first node for the converters, unless `launch` says otherwise.
Result<void> read_launch(const RecipeReader& in, StageRecipe& stage, const std::string& section) {
  stage.launch = (stage.name == "precompile" || stage.name == "train") ? Launch::torchrun : Launch::python;
  std::string launch;
  in.read_string(launch, section, "launch");
  if (launch.empty()) return {};
  if (launch == "torchrun") {
    stage.launch = Launch::torchrun;
  } else if (launch == "python") {
    stage.launch = Launch::python;
  } else {
    SourcePos where{in.file(), 0, 0};
    if (const auto* node = in.find(section, "launch")) where = in.pos(*node, section + ".launch");
    return fail(fmt::format("unknown launch '{}'", launch), to_string(where),
                "use launch = \"torchrun\" (every node, the cores of a node as workers) or \"python\" "
                "(python3 on the job's first node)");
  }
  return {};
}

// One [stages.<name>]: its values, then its checks against the cluster.
Result<void> read_stage(const RecipeReader& in, Recipe& recipe, StageRecipe& stage,
                        std::string_view stage_name) {
  const auto& c = recipe.cluster;
  const auto& file = in.file();
  const auto at = [&](std::string_view key) { return recipe.where(key); };
  const std::string name(stage_name);
  const std::string section = "stages." + name;
  stage.name = name;
  stage.nodes = (name == "precompile" || name == "train") ? c.nodes : 1;
  in.read_bool(stage.enabled, section, "enabled");
  in.read_string(stage.time, section, "time");
  in.read_string(stage.command, section, "command");
  in.read_string(stage.script, section, "script");
  in.read_string(stage.args_text, section, "args");
  in.read_string(stage.compile_args_text, section, "compile_args");
  if (auto r = read_launch(in, stage, section); !r) return r;
  if (auto r = in.read_uint(stage.nodes, section, "nodes", 1, 100000); !r) return r;
  for (const auto& k : stage_key_specs()) in.remember(recipe.positions, section, k.key);
  // Resilience (docs/resilience.md) is the train stage's: the others are short and restartable
  // by submitting again.
  for (const auto* key :
       {"max_restarts", "signal_grace", "preflight", "preflight_checks", "max_exclusions", "preflight_drain"})
    if (name != "train" && in.find(section, key) != nullptr)
      return fail(fmt::format("{} applies to the train stage only", key), at(section + "." + key),
                  "move it to [stages.train]");
  if (auto r = in.read_uint(stage.max_restarts, section, "max_restarts", 0, 1000); !r) return r;
  if (auto r = in.read_uint(stage.signal_grace, section, "signal_grace", 0, 65535); !r) return r;
  if (in.find(section, "preflight") != nullptr) {
    bool on = true;
    in.read_bool(on, section, "preflight");
    stage.preflight = on;
  }
  // Its names are checked where the chain is built (chain_recipe.cpp), beside the checks.
  in.read_string(stage.preflight_checks, section, "preflight_checks");
  if (auto r = in.read_uint(stage.max_exclusions, section, "max_exclusions", 0, 1000); !r) return r;
  in.read_bool(stage.preflight_drain, section, "preflight_drain");
  if (const auto limit = slurm_time_seconds(stage.time);
      name == "train" && stage.signal_grace > 0 && limit && *limit <= stage.signal_grace)
    return fail(fmt::format("signal_grace {} s is not shorter than the train stage's time limit '{}' ({} s): "
                            "the signal would come at once",
                            stage.signal_grace, stage.time, *limit),
                at(section + ".signal_grace"),
                "make signal_grace smaller than the time limit, or 0 to send no signal");
  if (const auto* env = in.find(section, "env"))
    for (auto&& [var, value] : *env->as_table())
      stage.env.emplace(std::string(var.str()), value.as_string()->get());
  const auto* table = in.find_table(section);
  if (const auto it = recipe.positions.find(section + ".command"); it != recipe.positions.end())
    stage.command_pos = it->second;
  else
    stage.command_pos = table != nullptr
                            ? SourcePos{file, table->source().begin.line, table->source().begin.column}
                            : SourcePos{file, 0, 0};
  if (!valid_slurm_time(stage.time))
    return fail(fmt::format("'{}' is not a Slurm time limit", stage.time), at(section + ".time"),
                "use minutes, HH:MM:SS or D-HH:MM:SS, e.g. time = \"04:00:00\"");
  if ((name == "precompile" || name == "train") && stage.nodes != c.nodes)
    return fail(fmt::format("{}.nodes = {} differs from cluster.nodes = {}", section, stage.nodes, c.nodes),
                at(section + ".nodes"),
                "the plan is computed for cluster.nodes: remove the stage's nodes and set cluster.nodes "
                "(or --nodes)");
  // A precompile stage without a command may be derived from the train stage's script: decided
  // once every stage is read (recipe_upstream).
  if (stage.enabled && stage.script.empty() && name != "precompile" &&
      stage.command.find_first_not_of(" \t\r\n") == std::string::npos)
    return fail(fmt::format("stage {} is enabled but has no command", name),
                table != nullptr ? to_string(stage.command_pos) : file,
                fmt::format("set command (or script) under [{}], or enabled = false", section));
  return {};
}

}  // namespace

std::vector<std::pair<std::string_view, std::string*>> path_fields(Recipe& recipe) {
  return {{"dataset.path", &recipe.dataset.path},
          {"model.pretrained", &recipe.model.pretrained},
          {"model.config", &recipe.model.config},
          {"dataset.tokenizer", &recipe.dataset.tokenizer},
          {"upstream.root", &recipe.upstream.root},
          {"upstream.venv", &recipe.upstream.venv},
          {"checkpoint.dir", &recipe.checkpoint.dir},
          {"checkpoint.converted_dir", &recipe.checkpoint.converted_dir},
          {"checkpoint.export_dir", &recipe.checkpoint.export_dir},
          {"run.runs_dir", &recipe.run.runs_dir},
          {"cache.dir", &recipe.cache.dir},
          {"cache.url", &recipe.cache.url}};
}

std::string path_from(const std::filesystem::path& base_dir, const std::string& value) {
  if (value.empty() || value.find("://") != std::string::npos || value.starts_with("{{")) return value;
  const std::filesystem::path given(value);
  if (given.is_absolute()) return value;
  std::error_code ec;
  const auto base = std::filesystem::absolute(base_dir.empty() ? std::filesystem::path(".") : base_dir, ec);
  if (ec) return value;
  return (base / given).lexically_normal().string();
}

Result<Recipe> build_recipe(toml::table& root, const std::string& file,
                            std::map<std::string, std::string> overridden, const InstanceTable& instances) {
  RecipeReader in(root, file, std::move(overridden));
  Recipe recipe;
  recipe.source = file;
  if (auto r = in.check_keys(); !r) return std::unexpected(r.error());
  recipe.instances = instances;
  if (auto r = add_instance_tables(recipe.instances, root, file, {InstanceOrigin::recipe, true, true}); !r)
    return std::unexpected(r.error());
  if (auto r = require_keys(in); !r) return std::unexpected(r.error());
  if (auto r = read_model(in, recipe.model); !r) return std::unexpected(r.error());
  if (auto r = read_cluster(in, recipe.cluster); !r) return std::unexpected(r.error());
  if (auto r = read_train(in, recipe.train); !r) return std::unexpected(r.error());
  if (auto r = read_other_sections(in, recipe); !r) return std::unexpected(r.error());
  for (const auto& s : section_specs())
    for (const auto& k : s.keys) in.remember(recipe.positions, s.name, k.key);
  resolve_paths(recipe, file);
  if (auto r = check_track(recipe); !r) return std::unexpected(r.error());
  if (auto r = check_instance(recipe); !r) return std::unexpected(r.error());
  if (auto r = check_track_instance(recipe); !r) return std::unexpected(r.error());
  if (auto r = check_model_shape(recipe); !r) return std::unexpected(r.error());
  if (auto r = check_warmup(recipe); !r) return std::unexpected(r.error());
  if (auto r = check_dataset_and_run(recipe); !r) return std::unexpected(r.error());
  if (auto r = check_ultraserver(recipe); !r) return std::unexpected(r.error());
  for (std::size_t i = 0; i < stage_names.size(); ++i)
    if (auto r = read_stage(in, recipe, recipe.stages[i], stage_names[i]); !r)
      return std::unexpected(r.error());
  return recipe;
}

}  // namespace trnslurm
