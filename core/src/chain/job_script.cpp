#include "trnslurm/chain/job_script.hpp"

#include "job_script_texts.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace trnslurm {
namespace {

Result<void> add_export(std::string& out, std::string_view name, std::string_view value,
                        std::string_view where) {
  if (!is_shell_name(name)) {
    return fail(fmt::format("'{}' is not a valid environment variable name", name), std::string(where),
                "use letters, digits and '_', not starting with a digit");
  }
  auto quoted = shell_quote(value);
  if (!quoted) {
    return fail(fmt::format("the value of {} cannot be put in a job script: {}", name, quoted.error().what),
                std::string(where), quoted.error().hint);
  }
  out += fmt::format("export {}={}\n", name, *quoted);
  return {};
}

void flatten_json(const nlohmann::json& j, const std::string& prefix, TemplateValues& out) {
  for (const auto& [key, value] : j.items()) {
    const auto name = prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
    if (value.is_object()) {
      flatten_json(value, name, out);
    } else if (value.is_string()) {
      out[name] = value.get<std::string>();
    } else if (value.is_boolean() || value.is_number()) {
      out[name] = value.dump();
    }
  }
}

// A shell file of scripts/ compiled in, cut at its marker lines: what goes before the recipe's
// command and what goes after it (scripts/train_wrapper.sh, scripts/precompile_cache.sh); a file
// without a command line is a head alone (scripts/stage_outcome.sh).
struct Splice {
  std::string_view head;
  std::string_view tail;
};

Splice splice_of(std::string_view name, std::string_view what) {
  const auto begin = fmt::format("# trnslurm: {} begins\n", what);
  constexpr std::string_view command = ":  # trnslurm: the command\n";
  const auto end = fmt::format("# trnslurm: {} ends\n", what);
  const auto texts = detail::job_script_texts();
  const auto it = std::ranges::find(texts, name, &detail::ScriptText::name);
  // Checked by the unit tests: a script without its markers cannot be built.
  const std::string_view text = it != texts.end() ? it->text : std::string_view{};
  const auto b = text.find(begin);
  const auto c = text.find(command);
  const auto e = text.find(end);
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) return {};
  if (c == std::string_view::npos || c > e)
    return Splice{text.substr(b + begin.size(), e - b - begin.size()), {}};
  return Splice{text.substr(b + begin.size(), c - b - begin.size()),
                text.substr(c + command.size(), e - c - command.size())};
}

const Splice& train_wrapper() {
  static const Splice w = splice_of("train_wrapper", "wrapper");
  return w;
}

const Splice& precompile_cache() {
  static const Splice w = splice_of("precompile_cache", "cache guard");
  return w;
}

// Every stage's record of how its job ended (scripts/stage_outcome.sh): only a head, run after
// the exports and before anything that can end the script.
const Splice& stage_outcome() {
  static const Splice w = splice_of("stage_outcome", "outcome");
  return w;
}

}  // namespace

std::vector<std::string> resilience_sbatch_args(const Resilience& r) {
  // Requeue explicitly (clusters may set JobRequeue=0); append so a restart keeps the log.
  std::vector<std::string> out{"--requeue", "--open-mode=append"};
  if (r.signal_grace > 0) out.push_back(fmt::format("--signal=B:USR1@{}", r.signal_grace));
  return out;
}

Result<std::string> render_job_script(const ScriptInput& in) {
  std::vector<std::string> used;
  auto body = render_template(in.command, in.values, in.command_origin, Substitution::variables, &used);
  if (!body) return std::unexpected(body.error());
  auto prologue = render_template(in.prologue, in.values, TextOrigin{"trnslurm's stage prologue", 1, 1},
                                  Substitution::variables, &used);
  if (!prologue) return std::unexpected(prologue.error());
  // The plan's figures, then every placeholder the command uses, each exported once.
  std::vector<std::pair<std::string, std::string>> exports{{"TRNSLURM_CHAIN_ID", in.chain_id},
                                                           {"TRNSLURM_STAGE", in.stage},
                                                           {"TRNSLURM_RUN_DIR", in.run_dir.string()}};
  exports.insert(exports.end(), in.exports.begin(), in.exports.end());
  for (const auto& name : used) {
    if (std::ranges::find(in.runtime_values, name) != in.runtime_values.end()) continue;
    const auto var = variable_for(name);
    const auto& value = in.values.find(name)->second;
    const auto same =
        std::find_if(exports.begin(), exports.end(), [&](const auto& e) { return e.first == var; });
    if (same == exports.end()) {
      exports.emplace_back(var, value);
    } else if (same->second != value) {
      return fail(fmt::format("placeholders that differ only in '.' and '_' hold different values: {} stands "
                              "for both '{}' and '{}'",
                              var, same->second, value),
                  in.command_origin.file, "use one spelling of the name");
    }
  }
  const bool slurm = in.host == JobHost::slurm;
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# shellcheck disable=SC2016  # values are single-quoted on purpose: they must not expand\n"
      "# Stage '{}' of trnslurm chain {}: rendered by `trnslurm {}` from the recipe.\n"
      "# Edit the recipe and {} again rather than this file.\n"
      "set -eo pipefail\n",
      in.stage, in.chain_id, slurm ? "submit" : "export", slurm ? "submit" : "export");
  const std::string where = in.command_origin.file.empty() ? "job script" : in.command_origin.file;
  for (const auto& [name, value] : exports) {
    if (auto r = add_export(out, name, value, where); !r) return std::unexpected(r.error());
  }
  for (const auto& [name, value] : in.env) {
    const auto env_where = fmt::format("{}: {}.{}", where, in.env_where, name);
    auto rendered = render_template(value, in.values, TextOrigin{env_where, 1, 1}, Substitution::raw);
    if (!rendered) return std::unexpected(rendered.error());
    if (auto r = add_export(out, name, *rendered, env_where); !r) return std::unexpected(r.error());
  }
  const bool guard = slurm && in.compile_cache && in.stage == "precompile";
  // The wrapper asks Slurm (squeue, scontrol requeue): a container's scheduler retries instead.
  const bool wrapped = slurm && in.resilience;
  if (in.compile_cache) {
    const auto& c = *in.compile_cache;
    for (const auto& [name, value] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
             {"NEURON_COMPILE_CACHE_URL", c.url},
             {"TRNSLURM_COMPILE_KEY", c.key},
             {"TRNSLURM_CACHE_MARKER", c.marker.native()},
             {"TRNSLURM_SKIP_WHEN_WARM", c.skip_when_warm ? "1" : "0"}})
      if (auto r = add_export(out, name, value, "compile cache"); !r) return std::unexpected(r.error());
    if (guard && precompile_cache().head.empty())
      return fail("the precompile cache guard is not compiled in", "trnslurm build");
  }
  if (wrapped) {
    out += fmt::format("export TRNSLURM_MAX_RESTARTS={}\nexport TRNSLURM_SIGNAL_GRACE={}\n",
                       in.resilience->max_restarts, in.resilience->signal_grace);
    if (in.preflight) {
      const auto& p = *in.preflight;
      for (const auto& [name, value] :
           {std::pair<std::string_view, std::string>{"TRNSLURM_PREFLIGHT_BIN", p.trnslurm},
            {"TRNSLURM_PREFLIGHT_CHECKS", p.checks},
            {"TRNSLURM_MAX_EXCLUSIONS", std::to_string(p.max_exclusions)},
            {"TRNSLURM_PREFLIGHT_DRAIN", p.drain ? "1" : "0"},
            {"TRNSLURM_CHECKPOINT_BYTES", std::to_string(p.checkpoint_bytes)}})
        if (auto r = add_export(out, name, value, where); !r) return std::unexpected(r.error());
    }
    if (train_wrapper().head.empty()) return fail("the train wrapper is not compiled in", "trnslurm build");
  }
  // The one place every stage gets its outcome record (docs/chain.md): whatever the stage, its
  // exits below all pass through the record's EXIT trap.
  if (stage_outcome().head.empty()) return fail("the outcome record is not compiled in", "trnslurm build");
  if (slurm) out += stage_outcome().head;
  if (guard) out += precompile_cache().head;
  if (wrapped) {
    out += train_wrapper().head;
  } else {
    out += "\n";
  }
  out += *prologue;
  out += *body;
  if (!out.ends_with('\n')) out += '\n';
  if (wrapped) out += train_wrapper().tail;
  if (guard) out += precompile_cache().tail;
  return out;
}

Result<TemplateValues> values_from_json(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) return fail("expected a JSON object", where);
  TemplateValues out;
  flatten_json(object, "", out);
  return out;
}

std::vector<std::pair<std::string, std::string>> exports_for(const TemplateValues& values,
                                                             std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : values) {
    std::string name(prefix);
    for (char c : key) {
      name += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (is_shell_name(name)) out.emplace_back(std::move(name), value);
  }
  return out;
}

}  // namespace trnslurm
