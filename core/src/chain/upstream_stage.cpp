#include "trnslurm/chain/upstream_stage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/upstream/args.hpp"
#include "trnslurm/upstream/interface.hpp"

namespace trnslurm {

namespace {

namespace fs = std::filesystem;

const upstream::ScriptInterface* script_of(const Recipe& recipe, const StageRecipe& stage) {
  const auto* record = upstream::bundled_interface(recipe.upstream.package, recipe.upstream.release);
  if (record == nullptr) return nullptr;
  auto script = record->script(stage.script);
  return script ? *script : nullptr;
}

// One word as a template: literal text single-quoted, placeholders left for render_template,
// which makes each a quoted variable reference.
Result<std::string> word_template(std::string_view word) {
  std::string out;
  std::size_t i = 0;
  while (i < word.size()) {
    auto open = word.find("{{", i);
    while (open != std::string_view::npos && open > 0 && word[open - 1] == '\\')
      open = word.find("{{", open + 2);
    const auto close = open == std::string_view::npos ? open : word.find("}}", open);
    const auto literal_end = close == std::string_view::npos ? word.size() : open;
    if (literal_end > i) {
      // render_template reads "{{" in the quoted text too: an escaped one stays literal. (Built
      // character by character: g++ 12 at -O2 warns -Wrestrict on string::insert here.)
      std::string literal;
      for (std::size_t k = i; k < literal_end; ++k) {
        if (word.substr(k, 2) == "{{" && (k == 0 || word[k - 1] != '\\')) literal += '\\';
        literal += word[k];
      }
      auto quoted = shell_word(literal);
      if (!quoted) return std::unexpected(quoted.error());
      out += *quoted;
    }
    if (close == std::string_view::npos) break;
    out += word.substr(open, close + 2 - open);
    i = close + 2;
  }
  return out.empty() ? std::string("''") : out;
}

// "--lr", "-h"; not "-1" or "-.5", which are values.
bool is_option(std::string_view word) {
  return word.size() > 1 && word[0] == '-' && std::isdigit(static_cast<unsigned char>(word[1])) == 0 &&
         word[1] != '.';
}

// The words, a flag and its values on a line of their own.
Result<std::string> words_template(const std::vector<ArgWord>& words) {
  std::string out;
  for (const auto& w : words) {
    auto t = word_template(w.text);
    if (!t) return fail(t.error().what, to_string(w.pos), t.error().hint);
    out += is_option(w.text) ? " \\\n    " : " ";
    out += *t;
  }
  return out;
}

// Every placeholder of the words known, and each flag's rendered value one upstream reads as meant.
Result<void> check_rendered(const upstream::ScriptInterface* script, const std::vector<ArgWord>& words,
                            const TemplateValues& values) {
  for (const auto& w : words) {
    if (!upstream::has_placeholder(w.text)) continue;
    auto r =
        render_template(w.text, values, TextOrigin{w.pos.file, w.pos.line, w.pos.column}, Substitution::raw);
    if (!r) return std::unexpected(r.error());
  }
  if (script == nullptr) return {};
  for (const auto& given : upstream::given_flags(*script, words)) {
    for (const auto& v : given.values) {
      if (!upstream::has_placeholder(v.text)) continue;
      auto rendered = render_template(v.text, values, TextOrigin{v.pos.file, v.pos.line, v.pos.column},
                                      Substitution::raw);
      if (!rendered) return std::unexpected(rendered.error());
      if (auto p = upstream::check_value(*given.flag, *rendered)) {
        p->pos = v.pos;
        auto e = upstream::to_error(*p);
        e.what = fmt::format("{} gets '{}' from '{}': {}", given.option.text, *rendered, v.text, e.what);
        return std::unexpected(e);
      }
    }
  }
  return {};
}

std::string newest_checkpoint_script() {
  return fmt::format(
      "# The newest checkpoint whose done marker is written: a run may stop early or resume past its\n"
      "# planned steps.\n"
      "newest=$({}) || true\n"
      "if [ -z \"$newest\" ]; then\n"
      "  echo \"trnslurm: no completed checkpoint (step_<n>/done or step-<n>/.metadata) in "
      "\"{{{{checkpoint_dir}}}} "
      ">&2\n"
      "  exit 1\n"
      "fi\n"
      "export TRNSLURM_NEWEST_CHECKPOINT={{{{checkpoint_dir}}}}/\"$newest\"\n",
      newest_step_pipeline("{{checkpoint_dir}}"));
}

// torchrun's own options come from the task's environment (the plugin sets them per node), so
// they are expanded inside the task, not in the batch script.
constexpr std::string_view torchrun_task =
    "srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'exec {}torchrun --nnodes \"$TRNSLURM_NNODES\" "
    "--node_rank \"$TRNSLURM_NODE_RANK\" \\\n"
    "    --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" \"$@\"' torchrun \\\n"
    "    --nproc_per_node {{{{cores_per_node}}}} ";

bool torchtitan(const Recipe& recipe) {
  return recipe.upstream.package.starts_with("torchtitan");
}

// TorchTitan's launch (docs/chain.md): one task per node, marked for the plugin as a torchrun
// step (--trn-launch=torchrun: per-node settings only), torchrun with c10d rendezvous on the
// plugin's MASTER_ADDR (as upstream's multinode_trainer.slurm), one worker per logical core of the
// plan; a node whose plugin counts other cores refuses before anything starts (the world size,
// so the data-parallel degree and the batch, would not be the plan's). On the CPU backend the
// workers are CPU processes: the NeuronCores a node may have are not theirs, nothing is compared.
// No --kill-on-bad-exit: when a node dies, c10d lets the other agents see it and exit at once, and
// srun's kill of the step would then be queued for the dead node too; Slurm delivers it once the
// node is back, to the requeued job's step of the same id (seen on the dev cluster: the resumed
// train killed seconds after it started). The step still ends on a trainer's failure: that node's
// agent exits, and the other nodes' workers at TorchTitan's collective timeout (comm.*).
std::string titan_torchrun_task(std::string_view module, bool neuron_cores) {
  const std::string_view check =
      neuron_cores
          ? "if [ -n \"${TRNSLURM_NPROC_PER_NODE:-}\" ] && [ \"$TRNSLURM_NPROC_PER_NODE\" != \"$n\" ]; "
            "then echo \"trnslurm: $(hostname) has $TRNSLURM_NPROC_PER_NODE logical NeuronCores, the plan "
            "$n\" >&2; exit 1; fi; "
          : "";
  return fmt::format(
      "srun --ntasks-per-node=1 --trn-launch=torchrun bash -c '"
      "n=$1; shift; {}\\\n"
      "    exec torchrun --nnodes \"$TRNSLURM_NNODES\" --nproc_per_node \"$n\" --rdzv_backend c10d "
      "--rdzv_endpoint \"$MASTER_ADDR:$MASTER_PORT\" \\\n"
      "    --rdzv_id \"$SLURM_JOB_ID\" \"$@\"' torchrun {{{{cores_per_node}}}} \\\n"
      "    -m {} ",
      check, module);
}

// "torchtitan/train.py" -> "torchtitan.train": run as upstream's run_train.sh does (-m).
std::string module_of(std::string_view script) {
  std::string m(script.substr(0, script.ends_with(".py") ? script.size() - 3 : script.size()));
  std::ranges::replace(m, '/', '.');
  return m;
}

// TorchTitan loads its initial weights (converted, or HF with initial_load_in_hf) only when its
// checkpoint folder holds no complete step-N; before upstream 7463c1646 (2026-07-22), only when
// the folder did not exist, so an existing folder without a complete step started from random
// weights without a word. Which rule the Neuron fork has is not published: the train stage makes
// both read the same. A folder with no complete step is moved aside (kept, and said so), so the
// trainer finds no folder at all; a folder with one resumes from it.
constexpr std::string_view titan_checkpoint_guard =
    "# No checkpoint folder without a complete step (TorchTitan would start from random weights).\n"
    "trn_ckpt={{{{checkpoint_dir}}}}\n"
    "if [ -d \"$trn_ckpt\" ] && [ -z \"$({})\" ]; then\n"
    "  trn_aside=\"$trn_ckpt.incomplete-$(date +%s)\"\n"
    "  mv \"$trn_ckpt\" \"$trn_aside\"\n"
    "  echo \"trnslurm: $trn_ckpt holds no complete step-N (.metadata): moved aside to $trn_aside, so the "
    "trainer loads its initial weights\" >&2\n"
    "fi\n";

// convert_to_hf.py writes the weights (safetensors and their index) only: a Hugging Face
// checkpoint also needs the model's config.json and the tokenizer's files, copied from the HF
// assets directory the stage gives the converter.
constexpr std::string_view titan_export_assets =
    "# A Hugging Face checkpoint: the weights above, config.json and the tokenizer's files.\n"
    "for trn_f in config.json generation_config.json tokenizer.json tokenizer_config.json "
    "special_tokens_map.json tokenizer.model vocab.json merges.txt; do\n"
    "  if [ -f {0}/\"$trn_f\" ]; then cp {0}/\"$trn_f\" {1}/; fi\n"
    "done\n"
    "for trn_f in config.json tokenizer_config.json; do\n"
    "  if [ ! -f {1}/\"$trn_f\" ]; then\n"
    "    echo \"trnslurm: the export has no $trn_f (none in the HF assets directory \"{0}\")\" >&2\n"
    "    exit 1\n"
    "  fi\n"
    "done\n";

// The words of `flag`'s value in the stage's arguments, as a template; "" when not given.
Result<std::string> flag_value(const upstream::ScriptInterface* script, const StageRecipe& stage,
                               std::string_view flag) {
  if (script == nullptr) return std::string();
  for (const auto& given : upstream::given_flags(*script, stage.args)) {
    if (std::ranges::find(given.flag->names, flag) == given.flag->names.end()) continue;
    if (given.values.size() != 1) break;
    return word_template(given.values.front().text);
  }
  return std::string();
}

}  // namespace

Result<UpstreamCommand> upstream_command(const Recipe& recipe, const StageRecipe& stage,
                                         const TemplateValues& values) {
  UpstreamCommand out;
  const auto* script = script_of(recipe, stage);
  if (auto r = check_rendered(script, stage.args, values); !r) return std::unexpected(r.error());
  auto words = words_template(stage.args);
  if (!words) return std::unexpected(words.error());
  const auto* record = upstream::bundled_interface(recipe.upstream.package, recipe.upstream.release);
  auto& c = out.command;
  c = fmt::format("# {} {} (interface record of commit {}): {}\n", recipe.upstream.package,
                  recipe.upstream.release, record != nullptr ? record->commit : "?", stage.script);
  if (!recipe.upstream.venv.empty())
    c += "export VIRTUAL_ENV={{upstream.venv}}\nexport PATH={{upstream.venv}}/bin:\"$PATH\"\n";
  const bool wants_newest = std::ranges::any_of(stage.args, [](const ArgWord& w) {
    return w.text.find(fmt::format("{{{{{}}}}}", newest_checkpoint)) != std::string::npos;
  });
  if (wants_newest) {
    c += newest_checkpoint_script();
    out.runtime_values.emplace_back(newest_checkpoint);
  }
  const bool titan = torchtitan(recipe);
  if (titan) {
    // The checkout's packages first, as `pip install -e .` of the fork gives them.
    c += "export PYTHONPATH={{upstream.root}}${PYTHONPATH:+:\"$PYTHONPATH\"}\n";
    if (stage.name == "train")
      c += fmt::format(fmt::runtime(titan_checkpoint_guard), newest_step_pipeline("\"$trn_ckpt\""));
  }
  auto path = shell_quote(stage.script);
  if (!path) return std::unexpected(path.error());
  if (titan && stage.launch == Launch::torchrun) {
    const auto backend = values.find("hw_backend");
    const bool neuron_cores = backend == values.end() || backend->second != "cpu";
    c += titan_torchrun_task(module_of(stage.script), neuron_cores) +
         words->substr(words->starts_with(' ') ? 1 : 0) + "\n";
  } else {
    if (stage.launch == Launch::torchrun)
      c += fmt::format(fmt::runtime(torchrun_task), stage.compile_only ? "neuron_parallel_compile " : "");
    else
      c += stage.compile_only ? "neuron_parallel_compile python3 " : "python3 ";
    c += "{{upstream.root}}/" + *path + *words + "\n";
  }
  if (titan && stage.name == "convert_back") {
    auto assets = flag_value(script, stage, "--hf_assets_path");
    if (!assets) return std::unexpected(assets.error());
    auto out_dir = flag_value(script, stage, "output_dir");
    if (!out_dir) return std::unexpected(out_dir.error());
    if (!assets->empty())
      c += fmt::format(fmt::runtime(titan_export_assets), *assets,
                       out_dir->empty() ? std::string("{{export_dir}}") : *out_dir);
  }
  return out;
}

Result<void> render_upstream_paths(const Recipe& recipe, TemplateValues& values) {
  for (const auto* key : {"upstream.root", "upstream.venv"}) {
    const auto it = values.find(key);
    if (it == values.end()) continue;
    const auto pos = recipe.positions.find(key);
    const TextOrigin origin = pos == recipe.positions.end()
                                  ? TextOrigin{recipe.where(key), 1, 1}
                                  : TextOrigin{pos->second.file, pos->second.line, pos->second.column};
    auto rendered = render_template(it->second, values, origin, Substitution::raw);
    if (!rendered) return std::unexpected(rendered.error());
    it->second = std::move(*rendered);
  }
  return {};
}

Result<void> check_upstream_files(const Recipe& recipe, const TemplateValues& values) {
  const auto value = [&](std::string_view key) {
    const auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
  };
  const auto root = value("upstream.root");
  const auto venv = value("upstream.venv");
  std::error_code ec;
  for (const auto& stage : recipe.stages) {
    if (!stage.enabled || stage.script.empty()) continue;
    const auto file = fs::path(root) / stage.script;
    if (!fs::is_regular_file(file, ec)) {
      // Looked up only here: finding it parses every bundled record, milliseconds that a submit
      // of a recipe without upstream stages would otherwise pay.
      const auto* record = upstream::bundled_interface(recipe.upstream.package, recipe.upstream.release);
      return fail(
          fmt::format("stage {} runs {}, which is not there", stage.name, file.string()),
          recipe.where("upstream.root"),
          record != nullptr
              ? fmt::format("clone {} and check out commit {} (release {}) at {}, or set upstream.root",
                            record->repository, record->commit, record->release, root)
              : std::string("set upstream.root to a checkout of the scripts"));
    }
    if (venv.empty()) continue;
    std::vector<std::string> tools{stage.launch == Launch::torchrun ? "torchrun" : "python3"};
    if (stage.compile_only) tools.emplace_back("neuron_parallel_compile");
    for (const auto& tool : tools) {
      const auto path = fs::path(venv) / "bin" / tool;
      if (!fs::is_regular_file(path, ec))
        return fail(fmt::format("stage {} runs {}, which is not there", stage.name, path.string()),
                    recipe.where("upstream.venv"),
                    "create the Neuron virtual environment (Neuron setup guide: "
                    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/setup/) or set upstream.venv");
    }
  }
  return {};
}

}  // namespace trnslurm
