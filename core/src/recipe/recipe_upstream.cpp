#include "recipe_upstream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "trnslurm/upstream/args.hpp"
#include "trnslurm/upstream/interface.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

namespace {

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Where the text of a string key starts in the file (or the --set that gave it).
SourcePos text_start(const Recipe& recipe, const std::string& key, std::string_view file_text) {
  const auto it = recipe.positions.find(key);
  if (it == recipe.positions.end()) return SourcePos{recipe.where(key), 0, 0};
  const auto& p = it->second;
  if (p.line == 0) return p;
  const auto o = string_value_origin(file_text, p.file, p.line, p.column);
  return SourcePos{o.file, o.line, o.column};
}

Result<std::vector<ArgWord>> words_of(const Recipe& recipe, const std::string& text, const std::string& key,
                                      std::string_view file_text) {
  if (text.empty()) return std::vector<ArgWord>{};
  return upstream::split_args(text, text_start(recipe, key, file_text));
}

std::string bundled_records() {
  std::vector<std::string> names;
  for (const auto& i : upstream::bundled_interfaces())
    if (!i.scripts.empty()) names.push_back(fmt::format("{} {}", i.package, i.release));
  return fmt::format("{}", fmt::join(names, ", "));
}

// The interface record of [upstream], for a recipe with at least one upstream stage.
Result<const upstream::Interface*> record_of(const Recipe& recipe, const std::string& stage_key) {
  const auto& u = recipe.upstream;
  if (u.package.empty() || u.release.empty())
    return fail(
        fmt::format("{} names an upstream script, but [upstream] names no package and release", stage_key),
        recipe.where(stage_key),
        fmt::format("add [upstream] with package = \"...\" and release = \"...\" (records bundled: {})",
                    bundled_records()));
  const auto* record = upstream::bundled_interface(u.package, u.release);
  if (record == nullptr)
    return fail(
        fmt::format("no interface record for {} release {}", u.package, u.release),
        recipe.where(recipe.positions.contains("upstream.release") ? "upstream.release" : "upstream.package"),
        fmt::format("records bundled: {} (docs/upstream.md: how a release is recorded)", bundled_records()));
  if (u.root.empty())
    return fail("[upstream] names no root: the checkout the scripts are run from",
                recipe.where("upstream.package"),
                fmt::format("clone {} at commit {} (release {}) and set root = \"<that directory>\"",
                            record->repository, record->commit, record->release));
  return record;
}

// The flag problems of a stage's words, as the first error.
Result<void> check_words(const upstream::ScriptInterface& script, const std::vector<ArgWord>& words,
                         const SourcePos& where, bool require) {
  upstream::CheckOptions options;
  options.where = where;
  options.require = require;
  const auto problems = upstream::check_args(script, words, options);
  if (!problems.empty()) return std::unexpected(upstream::to_error(problems.front()));
  return {};
}

bool same_word(const ArgWord& a, const ArgWord& b) {
  return std::tie(a.pos.file, a.pos.line, a.pos.column, a.text) ==
         std::tie(b.pos.file, b.pos.line, b.pos.column, b.text);
}

// The train stage's words with every flag that `compile` gives taken out, then `compile`.
std::vector<ArgWord> compile_words(const upstream::ScriptInterface& script, const std::vector<ArgWord>& train,
                                   const std::vector<ArgWord>& compile) {
  std::set<const upstream::Flag*> replaced;
  for (const auto& g : upstream::given_flags(script, compile)) replaced.insert(g.flag);
  std::vector<ArgWord> dropped;
  for (const auto& g : upstream::given_flags(script, train)) {
    if (!replaced.contains(g.flag)) continue;
    dropped.push_back(g.option);
    dropped.insert(dropped.end(), g.values.begin(), g.values.end());
  }
  std::vector<ArgWord> out;
  for (const auto& w : train)
    if (std::ranges::none_of(dropped, [&](const ArgWord& d) { return same_word(d, w); })) out.push_back(w);
  out.insert(out.end(), compile.begin(), compile.end());
  return out;
}

// torch.compile with the Neuron backend: --compile.enable (not its --compile.no_enable form) and
// --compile.backend neuron among the train stage's words.
bool compiles_ahead(const upstream::ScriptInterface& script, const std::vector<ArgWord>& words) {
  bool enable = false;
  bool neuron = false;
  for (const auto& g : upstream::given_flags(script, words)) {
    const auto& names = g.flag->names;
    // The record holds the switch and its --S.no_F form as two flags; the last one given wins.
    if (std::ranges::find(names, "--compile.enable") != names.end()) enable = true;
    if (std::ranges::find(names, "--compile.no_enable") != names.end()) enable = false;
    if (std::ranges::find(names, "--compile.backend") != names.end())
      neuron = g.values.size() == 1 && g.values.front().text == "neuron";
  }
  return enable && neuron;
}

Result<void> check_stage_keys(const Recipe& recipe, const StageRecipe& s) {
  const auto key = [&](std::string_view k) { return fmt::format("stages.{}.{}", s.name, k); };
  if (!s.script.empty() && !blank(s.command))
    return fail(fmt::format("stage {} has both a command and a script", s.name), recipe.where(key("script")),
                "keep one: script (with args) runs an upstream script; command runs any shell command");
  if (s.script.empty() && (!s.args_text.empty() || recipe.positions.contains(key("launch"))))
    return fail(
        fmt::format("stage {} has {} but no script", s.name, s.args_text.empty() ? "launch" : "args"),
        recipe.where(key(s.args_text.empty() ? "launch" : "args")),
        "name the upstream script the arguments are for: script = \"<path in the upstream repository>\"");
  if (!s.compile_args_text.empty() && s.name != "precompile")
    return fail("compile_args applies to the precompile stage only", recipe.where(key("compile_args")),
                "move it to [stages.precompile]");
  return {};
}

}  // namespace

Result<void> check_upstream_stages(Recipe& recipe, std::string_view file_text) {
  for (const auto& s : recipe.stages)
    if (auto r = check_stage_keys(recipe, s); !r) return r;
  auto& precompile = recipe.stages[1];
  const auto& train = recipe.stage("train");
  const bool derived = precompile.script.empty() && blank(precompile.command);
  if (precompile.enabled && derived && train.script.empty())
    return fail(
        "stage precompile is enabled but has no command", to_string(precompile.command_pos),
        "set command (or script) under [stages.precompile], give the train stage a script to derive it "
        "from, or enabled = false");
  if (!precompile.compile_args_text.empty() && !derived)
    return fail("compile_args is for a precompile stage derived from the train stage",
                recipe.where("stages.precompile.compile_args"),
                "remove the precompile stage's script or command, or its compile_args");

  for (auto& s : recipe.stages) {
    if (s.script.empty()) continue;
    const auto script_key = fmt::format("stages.{}.script", s.name);
    auto record = record_of(recipe, script_key);
    if (!record) return std::unexpected(record.error());
    auto script = (*record)->script(s.script);
    if (!script)
      return fail(script.error().what, recipe.where(script_key),
                  fmt::format("give the script's path in the {} repository; {}", recipe.upstream.package,
                              script.error().hint));
    if ((*script)->path != s.script)
      return fail(
          fmt::format("script '{}' is not a path in the {} repository", s.script, recipe.upstream.package),
          recipe.where(script_key), fmt::format("did you mean '{}'?", (*script)->path));
    const auto args_key = fmt::format("stages.{}.args", s.name);
    auto words = words_of(recipe, s.args_text, args_key, file_text);
    if (!words) return std::unexpected(words.error());
    const auto list_pos =
        text_start(recipe, recipe.positions.contains(args_key) ? args_key : script_key, file_text);
    if (auto r = check_words(**script, *words, list_pos, true); !r) return r;
    s.args = std::move(*words);
  }

  if (!precompile.enabled || !derived) return {};
  auto record = record_of(recipe, "stages.train.script");
  if (!record) return std::unexpected(record.error());
  const auto* script = *(*record)->script(train.script);
  auto compile = words_of(recipe, precompile.compile_args_text, "stages.precompile.compile_args", file_text);
  if (!compile) return std::unexpected(compile.error());
  const auto compile_pos = text_start(recipe, "stages.precompile.compile_args", file_text);
  if (auto r = check_words(*script, *compile, compile_pos, false); !r) return r;
  const bool titan = recipe.upstream.package.starts_with("torchtitan");
  if (titan && !compiles_ahead(*script, train.args)) {
    // TorchNeuron runs eager unless torch.compile with the Neuron backend is asked for: there is
    // no graph to compile ahead (Neuron docs, TorchNeuron: eager is the reference path).
    precompile.enabled = false;
    precompile.left_out =
        "none: an eager configuration compiles nothing ahead (the train stage gives no "
        "--compile.enable --compile.backend neuron)";
    return {};
  }
  precompile.script = train.script;
  precompile.launch = train.launch;
  precompile.args = compile_words(*script, train.args, *compile);
  // TorchTitan's compile cache fills on a short run of the train command itself: the Neuron docs
  // give no separate compile-only tool for the native backend (unverified on hardware).
  precompile.compile_only = !titan;
  if (auto r = check_words(*script, precompile.args, compile_pos, true); !r) return r;
  // The train stage's environment, with the precompile stage's own values on top: the graphs
  // compiled depend on it (NEURON_CC_FLAGS, XLA_*).
  for (const auto& [name, value] : train.env) precompile.env.emplace(name, value);
  return {};
}

}  // namespace trnslurm
