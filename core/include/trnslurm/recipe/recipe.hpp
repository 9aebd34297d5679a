#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/recipe/stage_names.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/source_pos.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

struct ModelRecipe {
  std::string name;
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;    // defaults to heads
  std::uint32_t ffn_hidden = 0;  // defaults to the Llama rule (docs/recipe.md)
  std::uint32_t vocab = 0;
  std::uint32_t seq_len = 0;
  std::string pretrained;  // Hugging Face checkpoint the convert stage reads
  std::string config;      // the model's configuration directory (config.json) the scripts read
};

struct ClusterRecipe {
  std::string instance;  // a type of Recipe::instances: trn2.48xlarge, cpu, ...
  std::uint32_t nodes = 0;
  std::uint32_t lnc = 0;                        // 0 = the instance's lnc_default
  std::optional<std::uint32_t> cores_per_node;  // required for cpu, derived otherwise
};

// Activation checkpointing as the trainer's configuration applies it (TorchTitan's
// activation_checkpoint.mode): what the plan's memory estimate assumes.
enum class Recompute { selective, full, none };

struct TrainRecipe {
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint32_t cp = 1;            // torchtitan: context parallel degree
  std::uint32_t dp_replicate = 1;  // torchtitan: DDP/HSDP replicas; dp_shard (FSDP) is the rest
  std::uint64_t gbs = 0;
  std::uint64_t mbs = 1;  // micro-batch (NxD) or local batch (TorchTitan) per DP rank
  std::uint32_t epochs = 1;
  double lr = 0;
  double warmup_ratio = 0.01;                 // of the steps of one epoch
  std::optional<std::uint64_t> warmup_steps;  // fixed; wins over warmup_ratio
  std::optional<double>
      decay_ratio;  // torchtitan: the last share of steps that decays; unset = all after warmup
  Recompute ac = Recompute::selective;  // torchtitan (NxD's recipes pass --selective_checkpoint_enabled)
};

struct DatasetRecipe {
  std::string path;
  std::string format = "auto";  // auto, hf, hf-dict, megatron, arrow (NxD); text (TorchTitan)
  std::string split = "train";  // for hf-dict
  // TorchTitan tokenizes text on the fly: the tokenizer (a Hugging Face assets directory) the
  // token count is taken with, and the count when the recipe states it.
  std::string tokenizer;
  std::optional<std::uint64_t> tokens;
};

struct CheckpointRecipe {
  std::string dir = "checkpoints";          // training checkpoints (step_<n>/...)
  std::string converted_dir = "converted";  // output of the convert stage
  std::string export_dir = "export";        // output of the convert_back stage
  std::uint64_t every = 0;                  // optimizer steps between checkpoints, 0 = only the last
  // Each chain writes <dir>/<chain id> (and so for converted_dir and export_dir); false: every
  // chain of the recipe writes the directories as written (chain/chain_dirs.hpp).
  bool per_chain = true;
};

struct EstimateRecipe {
  double tokens_per_second_per_node = 0;  // 0 = no wall-time estimate
  double price_per_node_hour = 0;         // 0 = no cost estimate
};

struct RunRecipe {
  std::string runs_dir = "runs";  // relative to the recipe's directory
};

struct SlurmRecipe {
  std::string partition;
  std::string account;
  std::string qos;
  bool exclusive = true;
  std::vector<std::string> sbatch_args;
  // How a job whose TP x PP group spans servers is kept in one UltraServer (docs/instances.md):
  // auto, segment (--segment, Slurm 24.05+), constraint (a node feature), none.
  std::string ultraserver_placement = "auto";
  std::vector<std::string> ultraserver_features;  // names, or prefixes ending in '*'
};

// The trainer a recipe's stages run, named by [upstream].package (docs/recipe.md, "Tracks"):
// TorchTitan Neuron on TorchNeuron, the current track (trn2, trn3; Neuron 2.33), or
// neuronx-distributed's example trainers on PyTorch/XLA, the legacy track (Neuron 2.28 is the
// last release that supports NxD training; trn1 has no other). Each has its own data and batch
// rule (plan/plan_nxd.cpp, plan/plan_torchtitan.cpp).
enum class Trainer { nxd, torchtitan };
// The package name [upstream].package gives: "neuronx-distributed", "torchtitan-neuron".
std::string_view package_of(Trainer trainer);
std::optional<Trainer> trainer_of_package(std::string_view package);
// "current" or "legacy".
std::string_view track_of(Trainer trainer);
// One line on what the track is and which release supports it, for `recipes`, `init` and `plan`.
std::string_view support_status(Trainer trainer);

// The upstream scripts a recipe's stages run (docs/upstream.md): a package and release whose
// interface record is compiled in, the checkout they are run from, the virtual environment.
struct UpstreamRecipe {
  std::string package;  // neuronx-distributed, torchtitan-neuron ("" = neuronx-distributed)
  Trainer trainer = Trainer::nxd;
  std::string release;  // 2.28, 2.33
  std::string root;     // a checkout of the package's repository at the record's commit
  std::string venv;     // its bin/ goes first on PATH in every stage; "" = PATH as it is
  std::string module;   // torchtitan: --module, the Python module holding the configuration
  std::string config;   // torchtitan: --config, the configuration's name in that module
};

// The compile cache the precompile and train stages share (docs/cache.md).
struct CacheRecipe {
  bool enabled = true;  // false: the stages get the plugin's NEURON_COMPILE_CACHE_URL, always compile
  std::string dir;      // trnslurm's records per compile key and, unless `url`, the graphs; "" = default
  std::string url;      // where the compiled graphs go instead (s3://...): <url>/<key>
};

enum class Launch { torchrun, python };

struct StageRecipe {
  std::string name;  // convert, precompile, train, convert_back
  bool enabled = true;
  std::uint32_t nodes = 1;
  std::string time = "01:00:00";
  std::string command;  // a shell command, or empty when the stage runs `script`
  std::map<std::string, std::string> env;
  SourcePos command_pos;
  // A stage that runs an upstream script: the script's path in the upstream repository, how it
  // is launched and its arguments, checked against the interface record when the recipe loads.
  // The precompile stage may leave them out: it then runs the train stage's script and
  // arguments under neuron_parallel_compile, with `compile_args` in place of the flags they give.
  std::string script;
  Launch launch = Launch::python;
  std::vector<ArgWord> args;
  std::string args_text;          // `args` as written
  std::string compile_args_text;  // precompile: `compile_args` as written
  bool compile_only = false;      // prefixed with neuron_parallel_compile
  // Why trnslurm left the stage out though the recipe enables it (TorchTitan's precompile of an
  // eager configuration: nothing is compiled ahead); "" when it did not.
  std::string left_out;
  // train only (docs/resilience.md): requeues allowed after a signal or node failure, and the
  // seconds before the time limit at which the job is told to checkpoint (0 = no signal).
  std::uint32_t max_restarts = 3;
  std::uint32_t signal_grace = 120;
  // train only (docs/health.md): the pre-flight health checks on the job's own nodes before
  // training and after every restart; unset = on for a Neuron instance type, off for cpu. A failing
  // node is excluded and the job requeued, at most max_exclusions times (not counted in
  // max_restarts). It is also drained where the site allows it (plugstack.conf preflight_drain=yes:
  // the plugin drains as root); preflight_drain = false opts the recipe out, it cannot opt in.
  std::optional<bool> preflight;
  std::string preflight_checks;  // comma-separated check names; "" = every node check
  std::uint32_t max_exclusions = 2;
  bool preflight_drain = true;
};

struct Recipe {
  std::filesystem::path source;  // the file read ("" for a bundled recipe's text)
  std::string text;              // the resolved TOML, overrides applied
  std::string file_text;         // the text as written, in which SourcePos lines are counted
  ModelRecipe model;
  ClusterRecipe cluster;
  TrainRecipe train;
  DatasetRecipe dataset;
  CheckpointRecipe checkpoint;
  EstimateRecipe estimate;
  RunRecipe run;
  SlurmRecipe slurm;
  UpstreamRecipe upstream;
  CacheRecipe cache;
  std::array<StageRecipe, 4> stages;           // in the order of stage_names
  std::map<std::string, SourcePos> positions;  // "section.key" -> where it was set
  // The instance types the recipe may name: bundled, the site's, and its own [instances.*].
  InstanceTable instances;
  // Every scalar of the resolved recipe as "section.key" (floats in their shortest form, dates
  // and times as TOML writes them):
  // the recipe's placeholders for stage commands.
  TemplateValues values;

  const StageRecipe& stage(std::string_view name) const;
  // Where a key was set ("train.tp"), or the recipe file when it was left at its default.
  std::string where(std::string_view key) const;
};

// One `--set section.key=value`. `--nodes`, `--epochs`, `--dataset` are shorthands for
// cluster.nodes, train.epochs and dataset.path.
struct Override {
  std::string key;
  std::string value;
  std::string origin;  // how errors name it: "--nodes"; "" = "--set key"
};
// Parses "section.key=value".
Result<Override> parse_override(std::string_view text);

// A recipe is a few kilobytes: a larger file is refused unread (util/file's read_file).
inline constexpr std::size_t max_recipe_size = std::size_t{1} << 20;

// Reads and validates a recipe file; overrides are applied before validation. `instances` are
// the types known before the recipe's own (bundled, and the site's: load_instance_table).
Result<Recipe> load_recipe(const std::filesystem::path& path, const std::vector<Override>& overrides = {},
                           const InstanceTable& instances = bundled_instances());
// The same from text; `source_name` is used in error positions.
Result<Recipe> load_recipe_text(std::string_view text, const std::string& source_name,
                                const std::vector<Override>& overrides = {},
                                const InstanceTable& instances = bundled_instances());

// The runs directory a recipe file names, read without loading the rest of it: a recipe broken
// elsewhere must not hide the chains it started. [run].runs_dir taken from the recipe's
// directory as load_recipe takes it, else "runs" there; ./runs when there is no recipe file.
std::filesystem::path runs_dir_named_by(const std::filesystem::path& recipe_file);

// Every key a recipe may hold, "section.key" (stages as "stages.<name>.key"), for docs and tests.
std::vector<std::string> recipe_keys();

}  // namespace trnslurm
