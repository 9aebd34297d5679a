#include "trnslurm/cache/compile_key.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "trnslurm/util/file.hpp"
#include "trnslurm/util/sha256.hpp"

namespace trnslurm {
namespace {
namespace fs = std::filesystem;

// Placeholders whose values never reach a graph: the schedule, the data, the paths. A flag of
// the train stage's arguments whose value names one of them is left out of the key, so that
// `--lr {{lr}}` or `--max_steps {{total_steps}}` changes nothing; every other word is hashed as
// written (the values of the placeholders that matter are inputs of their own).
constexpr std::array<std::string_view, 31> neutral_placeholders{"lr",
                                                                "train.lr",
                                                                "warmup_steps",
                                                                "train.warmup_steps",
                                                                "train.warmup_ratio",
                                                                "epochs",
                                                                "train.epochs",
                                                                "total_steps",
                                                                "steps_per_epoch",
                                                                "micro_steps_per_epoch",
                                                                "samples",
                                                                "tokens",
                                                                "samples_per_rank",
                                                                "dataset_path",
                                                                "dataset.path",
                                                                "dataset_format",
                                                                "dataset_split",
                                                                "checkpoint_dir",
                                                                "checkpoint.dir",
                                                                "checkpoint_every",
                                                                "checkpoint.every",
                                                                "converted_dir",
                                                                "export_dir",
                                                                "run_dir",
                                                                "chain_id",
                                                                "stage",
                                                                "newest_checkpoint",
                                                                "pretrained",
                                                                "model.pretrained",
                                                                "model.config",
                                                                "backend_dir"};

bool names_neutral_placeholder(std::string_view word) {
  for (auto open = word.find("{{"); open != std::string_view::npos; open = word.find("{{", open + 2)) {
    const auto close = word.find("}}", open);
    if (close == std::string_view::npos) return false;
    auto name = word.substr(open + 2, close - open - 2);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (std::ranges::find(neutral_placeholders, name) != neutral_placeholders.end()) return true;
  }
  return false;
}

// The train stage's words less the flags (with their values) that name a neutral placeholder.
std::string graph_words(const std::vector<ArgWord>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i].text;
    const bool flag = w.starts_with("-");
    const bool has_value = flag && w.find('=') == std::string::npos && i + 1 < words.size() &&
                           !words[i + 1].text.starts_with("-");
    if (flag &&
        (names_neutral_placeholder(w) || (has_value && names_neutral_placeholder(words[i + 1].text)))) {
      if (has_value) ++i;
      continue;
    }
    if (!flag && names_neutral_placeholder(w)) continue;
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// The environment that reaches the compiler or the graph: NEURON_* (the compiler's flags, the
// framework's graph switches such as NEURON_FUSE_SOFTMAX) and XLA_*, but not the runtime's
// NEURON_RT_* (they place and run a compiled graph; they do not change it).
bool graph_env(std::string_view name) {
  return (name.starts_with("NEURON_") && !name.starts_with("NEURON_RT_")) || name.starts_with("XLA_");
}

Result<void> check_no_own_cache(const Recipe& recipe) {
  if (!recipe.cache.enabled) return {};
  for (const auto* name : {"precompile", "train"}) {
    const auto& stage = recipe.stage(name);
    const auto where = recipe.where(fmt::format("stages.{}.env", name));
    if (stage.env.contains("NEURON_COMPILE_CACHE_URL"))
      return fail(
          fmt::format("stages.{}.env sets NEURON_COMPILE_CACHE_URL, but trnslurm sets the compile cache "
                      "of the precompile and train stages itself",
                      name),
          where, "remove it and set [cache] dir (or url) instead, or set [cache] enabled = false");
    if (const auto it = stage.env.find("NEURON_CC_FLAGS");
        it != stage.env.end() && it->second.find("--cache_dir") != std::string::npos)
      return fail(fmt::format("stages.{}.env's NEURON_CC_FLAGS names --cache_dir, which would take the "
                              "compiled graphs away from the cache trnslurm keeps for this recipe",
                              name),
                  where,
                  "remove --cache_dir and set [cache] dir (or url) instead, or set [cache] enabled = false");
  }
  return {};
}

}  // namespace

KeyFiles read_key_files(const Recipe& recipe, const fs::path& venv) {
  KeyFiles out;
  if (!recipe.model.config.empty())
    if (auto text = read_file(fs::path(recipe.model.config) / "config.json", 1 << 20))
      out.model_config = *text;
  if (venv.empty()) return out;
  std::error_code ec;
  for (const auto& py : fs::directory_iterator(venv / "lib", ec)) {
    if (!py.path().filename().string().starts_with("python")) continue;
    std::error_code ec2;
    for (const auto& pkg : fs::directory_iterator(py.path() / "site-packages", ec2)) {
      const auto name = pkg.path().filename().string();
      constexpr std::string_view prefix = "neuronx_cc-";
      constexpr std::string_view suffix = ".dist-info";
      if (name.starts_with(prefix) && name.ends_with(suffix) && name.size() > prefix.size() + suffix.size())
        out.compiler_version = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    }
  }
  return out;
}

Result<CompileKey> compile_key(const Recipe& recipe, const Plan& plan, const KeyFiles& files) {
  if (auto r = check_no_own_cache(recipe); !r) return std::unexpected(r.error());
  const auto& m = recipe.model;
  const auto& train = recipe.stage("train");
  CompileKey key;
  const auto add = [&](std::string name, std::string value, std::string why) {
    key.inputs.push_back(KeyInput{std::move(name), std::move(value), std::move(why)});
  };
  add("model.shape",
      fmt::format("layers={} hidden={} heads={} kv_heads={} ffn_hidden={} vocab={}", m.layers, m.hidden,
                  m.heads, m.kv_heads, m.ffn_hidden, m.vocab),
      "the shape of every weight and activation");
  add("model.seq_len", std::to_string(plan.seq_len), "the sequence dimension of every graph");
  add("model.config",
      files.model_config ? "sha256:" + sha256_hex(*files.model_config)
                         : fmt::format("unreadable:{}/config.json", m.config),
      "config.json's other settings (rope, norm epsilon, activation, tied embeddings) the trainer builds the "
      "model from");
  add("train.tp", std::to_string(plan.tp), "how each weight is sharded, and the tensor-parallel collectives");
  add("train.pp", std::to_string(plan.pp), "which layers each rank holds, and the pipeline's send/receive");
  add("plan.dp", std::to_string(plan.dp),
      "the data-parallel gradient all-reduce and ZeRO-1's optimizer shards");
  add("train.mbs", std::to_string(plan.mbs), "the batch dimension of every graph");
  if (plan.pp > 1)
    add("plan.grad_accum", std::to_string(plan.grad_accum),
        "with pipeline parallelism, the micro-batches of one step are the pipeline's schedule");
  add("cluster.instance", plan.instance, "the compiler's target (trn1, trn2, trn3) and the devices per node");
  add("cluster.lnc", std::to_string(plan.lnc), "logical NeuronCores: the compiler's --logical-nc-config");
  add("upstream",
      recipe.upstream.package.empty()
          ? std::string("none")
          : fmt::format("{} {}", recipe.upstream.package, recipe.upstream.release),
      "the training code that builds the graphs, released with one Neuron SDK");
  add("compiler", files.compiler_version.empty() ? std::string("not found") : files.compiler_version,
      "the neuronx-cc version in the virtual environment: a new compiler makes new graphs");
  if (!train.script.empty()) {
    add("train.script",
        fmt::format("{} {} {}", train.launch == Launch::torchrun ? "torchrun" : "python", train.script,
                    graph_words(train.args)),
        "the trainer and its switches (precision, flash attention, sequence parallel, recomputation), less "
        "the "
        "flags whose value is the schedule, the data or a path");
  } else {
    add("train.command", train.command, "the trainer and its switches, as written (placeholders unrendered)");
  }
  std::string env;
  for (const auto& [name, value] : train.env)
    if (graph_env(name)) env += fmt::format("{}{}={}", env.empty() ? "" : " ", name, value);
  add("train.env", env, "the compiler's flags (NEURON_CC_FLAGS) and the graph switches (NEURON_*, XLA_*)");
  std::string text;
  for (const auto& i : key.inputs) text += fmt::format("{}={}\n", i.name, i.value);
  key.hex = sha256_hex(text).substr(0, 16);
  return key;
}

bool is_compile_key(std::string_view text) {
  return text.size() == 16 && std::ranges::all_of(text, [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'f');
         });
}

}  // namespace trnslurm
