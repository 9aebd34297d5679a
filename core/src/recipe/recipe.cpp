// Recipe loading: TOML (toml++) -> overrides (recipe_overrides) -> key check, typed values and
// cross-checks (recipe_build, with the schema in recipe_schema) -> placeholders and resolved text.
// Every error names file:line:column (or the --set that caused it) and how to fix it.
#include "trnslurm/recipe/recipe.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <array>
#include <sstream>

#include "../util/toml_read.hpp"
#include "recipe_build.hpp"
#include "recipe_overrides.hpp"
#include "recipe_schema.hpp"
#include "recipe_upstream.hpp"
#include "trnslurm/recipe/recompute.hpp"
#include "trnslurm/util/enum_names.hpp"
#include "trnslurm/util/file.hpp"
#include "trnslurm/util/printable.hpp"

namespace trnslurm {

namespace {

void flatten_toml(const toml::table& t, const std::string& prefix, TemplateValues& out) {
  for (const auto& [key, node] : t) {
    // A recipe's own instance types are facts for the plan, not placeholders.
    if (prefix.empty() && (key.str() == "instances" || key.str() == "sources")) continue;
    const auto name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) {
      flatten_toml(*sub, name, out);
    } else if (const auto* s = node.as_string()) {
      out[name] = s->get();
    } else if (const auto* f = node.as_floating_point()) {
      out[name] = fmt::format("{}", f->get());  // shortest round trip: 1.5e-4 is 0.00015, not 0.000149999...
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

// Every key and string of the file in UTF-8 without control characters (TOML's escapes can
// write any code point): what a job script, the manifest or a terminal cannot carry is refused
// here, at its line and column, before anything is planned or submitted.
Result<void> check_strings(const toml::node& node, const std::string& path, const std::string& file) {
  const auto refuse = [&](const toml::source_region& at, const Unrepresentable& bad, std::string_view what) {
    return fail(fmt::format("{} holds {} at byte {}", what, bad.what, bad.offset),
                to_string(SourcePos{file, at.begin.line, at.begin.column}),
                "write the value in UTF-8, without control characters");
  };
  if (const auto* s = node.as_string()) {
    if (const auto bad = find_unrepresentable(s->get()))
      return refuse(node.source(), *bad, "the value of " + path);
  } else if (const auto* t = node.as_table()) {
    for (const auto& [key, child] : *t) {
      const auto name = path.empty() ? std::string(key.str()) : path + "." + std::string(key.str());
      if (const auto bad = find_unrepresentable(key.str())) return refuse(key.source(), *bad, "a key");
      if (auto r = check_strings(child, name, file); !r) return r;
    }
  } else if (const auto* a = node.as_array()) {
    for (std::size_t i = 0; i < a->size(); ++i)
      if (auto r = check_strings((*a)[i], fmt::format("{}[{}]", path, i), file); !r) return r;
  }
  return {};
}

}  // namespace

namespace {
constexpr std::array<EnumName<Recompute>, 3> recompute_names{
    {{Recompute::selective, "selective"}, {Recompute::full, "full"}, {Recompute::none, "none"}}};
}  // namespace

std::string_view to_string(Recompute ac) {
  return name_of(recompute_names, ac);
}

std::optional<Recompute> recompute_named(std::string_view name) {
  return value_named(recompute_names, name);
}

std::string_view package_of(Trainer trainer) {
  return trainer == Trainer::torchtitan ? "torchtitan-neuron" : "neuronx-distributed";
}

std::optional<Trainer> trainer_of_package(std::string_view package) {
  if (package.empty() || package == package_of(Trainer::nxd)) return Trainer::nxd;
  if (package == package_of(Trainer::torchtitan)) return Trainer::torchtitan;
  return std::nullopt;
}

std::string_view track_of(Trainer trainer) {
  return trainer == Trainer::torchtitan ? "current" : "legacy";
}

// Neuron documentation, "Announcements" (announce-eos-nxdt-nxd-core-training) and the 2.33
// release notes.
std::string_view support_status(Trainer trainer) {
  if (trainer == Trainer::torchtitan)
    return "current track: TorchTitan Neuron on TorchNeuron, trn2 and trn3, Neuron 2.33 (beta)";
  return "legacy track: neuronx-distributed on PyTorch/XLA, supported up to Neuron 2.28 (its last release "
         "for training)";
}

const StageRecipe& Recipe::stage(std::string_view name) const {
  for (const auto& s : stages)
    if (s.name == name) return s;
  return stages[2];  // unreachable for the names in stage_names
}

std::string Recipe::where(std::string_view key) const {
  if (const auto it = positions.find(std::string(key)); it != positions.end()) return to_string(it->second);
  return source.empty() ? std::string("recipe") : source.string();
}

Result<Recipe> load_recipe_text(std::string_view text, const std::string& source_name,
                                const std::vector<Override>& overrides, const InstanceTable& instances) {
  auto parsed = parse_toml(text, source_name);
  if (!parsed) return std::unexpected(parsed.error());
  toml::table& root = *parsed;
  if (auto r = check_strings(root, "", source_name); !r) return std::unexpected(r.error());
  std::map<std::string, std::string> overridden;
  for (const auto& o : overrides) {
    auto path = apply_override(root, o);
    if (!path) return std::unexpected(path.error());
    overridden[*path] = origin_of(o);
  }
  auto recipe = build_recipe(root, source_name, std::move(overridden), instances);
  if (!recipe) return recipe;
  if (auto r = check_upstream_stages(*recipe, text); !r) return std::unexpected(r.error());
  flatten_toml(root, "", recipe->values);
  // A path placeholder ({{dataset.path}}) stands for the path as resolved, not as written.
  for (const auto& [key, value] : path_fields(*recipe))
    if (const auto it = recipe->values.find(key); it != recipe->values.end()) it->second = *value;
  recipe->file_text = std::string(text);
  if (overrides.empty()) {
    recipe->text = std::string(text);
  } else {
    std::ostringstream out;
    // Keys only: a value may hold a newline, which would end the comment.
    out << "# resolved from " << source_name << " with overrides of:";
    for (const auto& o : overrides) out << " " << o.key;
    out << "\n" << root << "\n";
    recipe->text = out.str();
  }
  return recipe;
}

std::filesystem::path runs_dir_named_by(const std::filesystem::path& recipe_file) {
  const auto text = read_file(recipe_file, max_recipe_size);
  if (!text) return path_from({}, RunRecipe{}.runs_dir);
  std::string dir = RunRecipe{}.runs_dir;
  if (const auto t = parse_toml(*text, recipe_file.string()))
    if (auto named = (*t)["run"]["runs_dir"].value<std::string>(); named && !named->empty()) dir = *named;
  return path_from(recipe_file.parent_path(), dir);
}

Result<Recipe> load_recipe(const std::filesystem::path& path, const std::vector<Override>& overrides,
                           const InstanceTable& instances) {
  // The path goes into the manifest and the job scripts as text.
  if (const auto bad = find_unrepresentable(path.string()))
    return fail(fmt::format("the recipe's path holds {} at byte {}", bad->what, bad->offset), path.string(),
                "rename the file, or give it by another path");
  // A recipe is a few kilobytes: 1 MiB at most.
  const auto text =
      read_file_or_fail(path, max_recipe_size, "the recipe",
                        "create one with `trnslurm init NAME` (see `trnslurm recipes`) or give -r PATH");
  if (!text) return std::unexpected(text.error());
  auto recipe = load_recipe_text(*text, path.string(), overrides, instances);
  if (recipe) recipe->source = path;
  return recipe;
}

}  // namespace trnslurm
