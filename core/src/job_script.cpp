#include "trnslurm/job_script.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

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

void flatten_toml(const toml::table& t, const std::string& prefix, TemplateValues& out) {
  for (const auto& [key, node] : t) {
    const auto name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) {
      flatten_toml(*sub, name, out);
    } else if (const auto* s = node.as_string()) {
      out[name] = s->get();
    } else if (node.is_number() || node.is_boolean() || node.is_date_time() || node.is_date() ||
               node.is_time()) {
      std::ostringstream text;
      node.visit([&](const auto& v) {
        if constexpr (toml::is_value<decltype(v)>) text << v;
      });
      out[name] = text.str();
    }
  }
}

}  // namespace

Result<std::string> render_job_script(const ScriptInput& in) {
  std::vector<std::string> used;
  auto body = render_template(in.command, in.values, in.command_origin, Substitution::variables, &used);
  if (!body) return std::unexpected(body.error());
  // The plan's figures, then every placeholder the command uses, each exported once.
  std::vector<std::pair<std::string, std::string>> exports{{"TRNSLURM_CHAIN_ID", in.chain_id},
                                                           {"TRNSLURM_STAGE", in.stage},
                                                           {"TRNSLURM_RUN_DIR", in.run_dir.string()}};
  exports.insert(exports.end(), in.exports.begin(), in.exports.end());
  for (const auto& name : used) {
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
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# shellcheck disable=SC2016  # values are single-quoted on purpose: they must not expand\n"
      "# Stage '{}' of trnslurm chain {}: rendered by `trnslurm submit` from the recipe.\n"
      "# Edit the recipe and submit again rather than this file.\n"
      "set -eo pipefail\n",
      in.stage, in.chain_id);
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
  out += "\n";
  out += *body;
  if (!out.ends_with('\n')) out += '\n';
  return out;
}

Result<TemplateValues> values_from_json(std::string_view json_text, const std::string& where) {
  try {
    const auto j = nlohmann::json::parse(json_text);
    if (!j.is_object()) return fail("expected a JSON object", where);
    TemplateValues out;
    flatten_json(j, "", out);
    return out;
  } catch (const nlohmann::json::exception& e) {
    return fail(fmt::format("invalid JSON: {}", e.what()), where);
  }
}

Result<TemplateValues> values_from_toml(std::string_view toml_text, const std::string& where) {
  try {
    const auto t = toml::parse(toml_text, where);
    TemplateValues out;
    flatten_toml(t, "", out);
    return out;
  } catch (const toml::parse_error& e) {
    return fail(std::string(e.description()),
                fmt::format("{}:{}:{}", where, e.source().begin.line, e.source().begin.column));
  }
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
