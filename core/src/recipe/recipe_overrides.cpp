#include "recipe_overrides.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <vector>

#include "../util/toml_read.hpp"
#include "recipe_schema.hpp"
#include "trnslurm/util/parse_number.hpp"
#include "trnslurm/util/printable.hpp"
#include "trnslurm/util/suggest.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

std::string origin_of(const Override& o) {
  return o.origin.empty() ? "--set " + o.key : o.origin;
}

namespace {

// Turns the text of a --set value into a TOML node of the kind the key expects.
Result<toml::table> override_value(const Override& o, ValueKind kind) {
  const std::string where = origin_of(o);
  const auto bad = [&](std::string_view expected, std::string hint) {
    return fail(fmt::format("'{}' is not {} ({} must be {})", o.value, expected, o.key, expected), where,
                std::move(hint));
  };
  toml::table holder;
  switch (kind) {
    case ValueKind::integer: {
      const auto v = parse_number<std::int64_t>(o.value);
      if (!v) return bad("an integer", fmt::format("e.g. --set {}=8", o.key));
      holder.insert("v", *v);
      break;
    }
    case ValueKind::number: {
      const auto v = parse_number<double>(o.value);
      if (!v || !std::isfinite(*v)) return bad("a number", fmt::format("e.g. --set {}=1.5e-4", o.key));
      holder.insert("v", *v);
      break;
    }
    case ValueKind::boolean:
      if (o.value != "true" && o.value != "false")
        return bad("true or false", fmt::format("--set {}=true or --set {}=false", o.key, o.key));
      holder.insert("v", o.value == "true");
      break;
    case ValueKind::string:
      holder.insert("v", o.value);
      break;
    case ValueKind::strings:
    case ValueKind::env: {
      toml::table parsed;
      const auto text = "v = " + o.value;
      if (auto deep = check_toml_nesting(text, where); !deep)
        return fail(deep.error().what, where, deep.error().hint);
      try {
        parsed = toml::parse(text);
      } catch (const toml::parse_error&) {
        return bad(kind_name(kind), kind == ValueKind::strings
                                        ? fmt::format("e.g. --set '{}=[\"--arg\", \"value\"]'", o.key)
                                        : fmt::format("e.g. --set '{}={{ NAME = \"value\" }}'", o.key));
      }
      const auto* node = parsed.get("v");
      if (node == nullptr || !has_kind(*node, kind))
        return bad(kind_name(kind), kind == ValueKind::strings
                                        ? fmt::format("e.g. --set '{}=[\"--arg\", \"value\"]'", o.key)
                                        : fmt::format("e.g. --set '{}={{ NAME = \"value\" }}'", o.key));
      holder.insert("v", *node);
      break;
    }
  }
  return holder;
}

}  // namespace

// Applies one override to the table; returns the path it set.
Result<std::string> apply_override(toml::table& root, const Override& o) {
  const std::string where = origin_of(o);
  // Refused before it reaches a script, the manifest or a terminal (docs/security.md, "Values").
  if (const auto bad = find_unrepresentable(o.value))
    return fail(fmt::format("the value holds {} at byte {}", bad->what, bad->offset), where,
                "give the value in UTF-8, without control characters");
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto dot = o.key.find('.', start);
    parts.push_back(o.key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // section.key, stages.<stage>.key, or stages.<stage>.env.NAME
  std::string section;
  std::string key;
  std::optional<std::string> env_var;
  if (parts.size() == 2) {
    section = parts[0];
    key = parts[1];
  } else if ((parts.size() == 3 || parts.size() == 4) && parts[0] == "stages") {
    section = parts[0] + "." + parts[1];
    key = parts[2];
    if (parts.size() == 4) {
      if (key != "env")
        return fail(fmt::format("unknown key '{}'", o.key), where,
                    "only stages.<stage>.env.NAME has four parts");
      env_var = parts[3];
    }
  }
  const auto kind = kind_of(section, key);
  if (!kind) {
    std::string hint = "use section.key, e.g. --set train.tp=8; see docs/recipe.md";
    if (auto close = closest_match(o.key, recipe_keys())) hint = fmt::format("did you mean '{}'?", *close);
    return fail(fmt::format("unknown recipe key '{}'", o.key), where, hint);
  }
  toml::table* table = &root;
  std::vector<std::string> path_to_table{parts[0]};
  if (section.starts_with("stages.")) path_to_table.push_back(parts[1]);
  if (env_var) path_to_table.emplace_back("env");
  std::string walked;
  for (const auto& part : path_to_table) {
    walked += walked.empty() ? part : "." + part;
    auto [it, inserted] = table->emplace<toml::table>(part);
    (void)inserted;
    table = it->second.as_table();
    if (table == nullptr)
      return fail(fmt::format("cannot set {}: '{}' in the recipe is not a table", o.key, walked), where,
                  "fix the recipe first");
  }
  if (env_var) {
    if (!is_shell_name(*env_var))
      return fail(fmt::format("'{}' is not a valid environment variable name", *env_var), where,
                  "use letters, digits and '_', not starting with a digit");
    table->insert_or_assign(*env_var, o.value);
    return o.key;
  }
  auto value = override_value(o, *kind);
  if (!value) return std::unexpected(value.error());
  table->insert_or_assign(key, *value->get("v"));
  return o.key;
}

Result<Override> parse_override(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail(fmt::format("'{}' is not section.key=value", text), "--set",
                "e.g. --set train.tp=8 or --set dataset.path=/data/train");
  Override o{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)), {}};
  if (o.key.find('.') == std::string::npos)
    return fail(fmt::format("'{}' has no section", o.key), "--set " + o.key,
                "write section.key, e.g. --set train.tp=8");
  return o;
}

}  // namespace trnslurm
