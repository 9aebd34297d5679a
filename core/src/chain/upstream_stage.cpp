#include "trnslurm/chain/upstream_stage.hpp"

#include <fmt/format.h>

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
      "  echo \"trnslurm: no completed checkpoint (step_<n>/done) in \"{{{{checkpoint_dir}}}} >&2\n"
      "  exit 1\n"
      "fi\n"
      "export TRNSLURM_NEWEST_CHECKPOINT={{{{checkpoint_dir}}}}/step_\"$newest\"\n",
      newest_step_pipeline("{{checkpoint_dir}}"));
}

// torchrun's own options come from the task's environment (the plugin sets them per node), so
// they are expanded inside the task, not in the batch script.
constexpr std::string_view torchrun_task =
    "srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'exec {}torchrun --nnodes \"$TRNSLURM_NNODES\" "
    "--node_rank \"$TRNSLURM_NODE_RANK\" \\\n"
    "    --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" \"$@\"' torchrun \\\n"
    "    --nproc_per_node {{{{cores_per_node}}}} ";

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
  auto path = shell_quote(stage.script);
  if (!path) return std::unexpected(path.error());
  if (stage.launch == Launch::torchrun)
    c += fmt::format(fmt::runtime(torchrun_task), stage.compile_only ? "neuron_parallel_compile " : "");
  else
    c += stage.compile_only ? "neuron_parallel_compile python3 " : "python3 ";
  c += "{{upstream.root}}/" + *path + *words + "\n";
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
