#include "recipe_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "../util/toml_read.hpp"
#include "trnslurm/util/suggest.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

SourcePos RecipeReader::pos(const toml::node& node, const std::string& path) const {
  if (const auto it = overridden_.find(path); it != overridden_.end()) return SourcePos{it->second, 0, 0};
  const auto& begin = node.source().begin;
  return SourcePos{file_, begin.line, begin.column};
}
SourcePos RecipeReader::pos(const toml::key& key, const std::string& path) const {
  if (const auto it = overridden_.find(path); it != overridden_.end()) return SourcePos{it->second, 0, 0};
  const auto& begin = key.source().begin;
  return SourcePos{file_, begin.line, begin.column};
}

Result<void> RecipeReader::check_keys() {
  for (auto&& [key, node] : root_) {
    const std::string name(key.str());
    if (name == "stages") {
      if (auto r = check_stages(key, node); !r) return r;
      continue;
    }
    if (name == "instances" || name == "sources") continue;  // the instances format's (build_recipe)
    const auto* keys = keys_of_section(name);
    if (keys == nullptr) return unknown_key(key, name, "", section_names());
    if (!node.is_table())
      return fail(fmt::format("'{}' must be a table, got {}", name, toml_type_name(node)),
                  to_string(pos(node, name)), fmt::format("write it as a [{}] section", name));
    if (auto r = check_section(*node.as_table(), name, *keys); !r) return r;
  }
  return {};
}

const toml::node* RecipeReader::find(std::string_view section, std::string_view key) const {
  const toml::node* node = root_.get(section.substr(0, section.find('.')));
  if (section.starts_with("stages.")) {
    if (node == nullptr || !node->is_table()) return nullptr;
    node = node->as_table()->get(section.substr(7));
  }
  if (node == nullptr || !node->is_table()) return nullptr;
  return node->as_table()->get(key);
}

const toml::table* RecipeReader::find_table(std::string_view section) const {
  const toml::node* node = root_.get(section.substr(0, section.find('.')));
  if (node != nullptr && section.starts_with("stages.") && node->is_table())
    node = node->as_table()->get(section.substr(7));
  return node == nullptr ? nullptr : node->as_table();
}

void RecipeReader::remember(std::map<std::string, SourcePos>& positions, std::string_view section,
                            std::string_view key) const {
  if (const auto* node = find(section, key)) {
    const std::string path = fmt::format("{}.{}", section, key);
    positions[path] = pos(*node, path);
  }
}

Result<std::optional<std::uint64_t>> RecipeReader::uint_value(std::string_view section, std::string_view key,
                                                              std::uint64_t lo, std::uint64_t hi) const {
  const auto* node = find(section, key);
  if (node == nullptr) return std::optional<std::uint64_t>{};
  const std::int64_t v = node->as_integer()->get();
  const std::string path = fmt::format("{}.{}", section, key);
  if (v < 0 || static_cast<std::uint64_t>(v) < lo || static_cast<std::uint64_t>(v) > hi)
    return fail(
        fmt::format("{} = {} is out of range", path, v), to_string(pos(*node, path)),
        hi == std::numeric_limits<std::uint32_t>::max() || hi == std::numeric_limits<std::uint64_t>::max()
            ? fmt::format("use an integer of at least {}", lo)
            : fmt::format("use an integer from {} to {}", lo, hi));
  return std::optional<std::uint64_t>{static_cast<std::uint64_t>(v)};
}

Result<void> RecipeReader::read_number(double& out, std::string_view section, std::string_view key, double lo,
                                       double hi) const {
  const auto* node = find(section, key);
  if (node == nullptr) return {};
  const double v =
      node->is_integer() ? static_cast<double>(node->as_integer()->get()) : node->as_floating_point()->get();
  const std::string path = fmt::format("{}.{}", section, key);
  if (!std::isfinite(v) || v < lo || v > hi)
    return fail(fmt::format("{} = {} is out of range", path, v), to_string(pos(*node, path)),
                hi == std::numeric_limits<double>::max() ? fmt::format("use a number of at least {}", lo)
                                                         : fmt::format("use a number from {} to {}", lo, hi));
  out = v;
  return {};
}

void RecipeReader::read_string(std::string& out, std::string_view section, std::string_view key) const {
  if (const auto* node = find(section, key)) out = node->as_string()->get();
}

void RecipeReader::read_bool(bool& out, std::string_view section, std::string_view key) const {
  if (const auto* node = find(section, key)) out = node->as_boolean()->get();
}

Result<void> RecipeReader::require(std::string_view section, std::string_view key,
                                   std::string_view example) const {
  if (find(section, key) != nullptr) return {};
  const auto* table = find_table(section);
  const std::string where =
      table != nullptr ? to_string(SourcePos{file_, table->source().begin.line, table->source().begin.column})
                       : file_;
  return fail(fmt::format("missing {}.{}", section, key), where,
              table != nullptr ? fmt::format("add `{} = {}` to the [{}] section", key, example, section)
                               : fmt::format("add a [{}] section with `{} = {}`", section, key, example));
}

Result<void> RecipeReader::unknown_key(const toml::key& key, const std::string& name,
                                       const std::string& section,
                                       const std::vector<std::string>& candidates) const {
  const std::string path = section.empty() ? name : section + "." + name;
  const std::string what = section.empty() ? fmt::format("unknown section '{}'", name)
                                           : fmt::format("unknown key '{}' in [{}]", name, section);
  std::string hint;
  if (auto close = closest_match(name, candidates)) {
    hint = fmt::format("did you mean '{}'?", *close);
  } else if (auto homes = sections_holding(name, section); !homes.empty()) {
    hint = fmt::format("'{}' belongs in [{}]", name, fmt::join(homes, ", "));
  } else {
    hint = fmt::format("valid {}: {}", section.empty() ? "sections" : "keys", fmt::join(candidates, ", "));
  }
  return fail(what, to_string(pos(key, path)), hint);
}

Result<void> RecipeReader::check_section(const toml::table& table, const std::string& section,
                                         const std::vector<KeySpec>& keys) {
  for (auto&& [key, node] : table) {
    const std::string name(key.str());
    const auto it = std::ranges::find(keys, name, &KeySpec::key);
    if (it == keys.end()) return unknown_key(key, name, section, key_names(keys));
    const std::string path = fmt::format("{}.{}", section, name);
    if (!has_kind(node, it->kind)) {
      std::string hint = fmt::format("write it as `{} = {}`", name, example_for(it->kind));
      if (node.is_string() && (it->kind == ValueKind::integer || it->kind == ValueKind::number))
        hint = fmt::format("remove the quotes: `{} = {}`", name, node.as_string()->get());
      return fail(fmt::format("{} must be {}, got {}", path, kind_name(it->kind), toml_type_name(node)),
                  to_string(pos(node, path)), hint);
    }
    if (it->kind == ValueKind::env) {
      for (auto&& [var, value] : *node.as_table()) {
        const std::string var_name(var.str());
        const std::string var_path = fmt::format("{}.{}", path, var_name);
        if (!is_shell_name(var_name))
          return fail(fmt::format("'{}' is not a valid environment variable name", var_name),
                      to_string(pos(var, var_path)),
                      "use letters, digits and '_', not starting with a digit");
        if (const auto why = reserved_variable(var_name))
          return fail(fmt::format("{} cannot be set in a stage's env: {}", var_name, *why),
                      to_string(pos(var, var_path)), "use another name");
        if (!value.is_string())
          return fail(fmt::format("{} must be a string, got {}", var_path, toml_type_name(value)),
                      to_string(pos(value, var_path)), fmt::format("quote it: {} = \"...\"", var_name));
      }
    }
  }
  return {};
}

Result<void> RecipeReader::check_stages(const toml::key& key, toml::node& node) {
  if (!node.is_table())
    return fail("'stages' must be a table", to_string(pos(key, "stages")),
                "write stages as [stages.train] sections");
  std::vector<std::string> names(stage_names.begin(), stage_names.end());
  for (auto&& [stage_key, stage] : *node.as_table()) {
    const std::string name(stage_key.str());
    if (std::ranges::find(stage_names, name) == stage_names.end())
      return unknown_key(stage_key, name, "stages", names);
    if (!stage.is_table())
      return fail(fmt::format("stages.{} must be a table", name), to_string(pos(stage, "stages." + name)),
                  fmt::format("write it as a [stages.{}] section", name));
    if (auto r = check_section(*stage.as_table(), "stages." + name, stage_key_specs()); !r) return r;
  }
  return {};
}

}  // namespace trnslurm
