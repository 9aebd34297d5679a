#include "recipe_schema.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trnslurm/recipe/recipe.hpp"

namespace trnslurm {

const std::vector<SectionSpec>& section_specs() {
  using enum ValueKind;
  static const std::vector<SectionSpec> specs{
      {"model",
       {{"name", string},
        {"layers", integer},
        {"hidden", integer},
        {"heads", integer},
        {"kv_heads", integer},
        {"ffn_hidden", integer},
        {"vocab", integer},
        {"seq_len", integer},
        {"pretrained", string},
        {"config", string}}},
      {"cluster", {{"instance", string}, {"nodes", integer}, {"lnc", integer}, {"cores_per_node", integer}}},
      {"train",
       {{"tp", integer},
        {"pp", integer},
        {"cp", integer, KeyTrack::torchtitan},
        {"dp_replicate", integer, KeyTrack::torchtitan},
        {"gbs", integer},
        {"mbs", integer},
        {"epochs", integer},
        {"lr", number},
        {"warmup_ratio", number},
        {"warmup_steps", integer},
        {"decay_ratio", number, KeyTrack::torchtitan},
        {"ac", string, KeyTrack::torchtitan}}},
      {"dataset",
       {{"path", string},
        {"format", string},
        {"split", string, KeyTrack::nxd},
        {"tokenizer", string, KeyTrack::torchtitan},
        {"tokens", integer, KeyTrack::torchtitan}}},
      {"checkpoint",
       {{"dir", string},
        {"converted_dir", string},
        {"export_dir", string},
        {"every", integer},
        {"per_chain", boolean}}},
      {"estimate", {{"tokens_per_second_per_node", number}, {"price_per_node_hour", number}}},
      {"run", {{"runs_dir", string}}},
      {"slurm",
       {{"partition", string},
        {"account", string},
        {"qos", string},
        {"exclusive", boolean},
        {"sbatch_args", strings},
        {"ultraserver_placement", string},
        {"ultraserver_features", strings}}},
      {"upstream",
       {{"package", string},
        {"release", string},
        {"root", string},
        {"venv", string},
        {"module", string, KeyTrack::torchtitan},
        {"config", string, KeyTrack::torchtitan}}},
      {"cache", {{"enabled", boolean}, {"dir", string}, {"url", string}}},
  };
  return specs;
}

const std::vector<KeySpec>& stage_key_specs() {
  using enum ValueKind;
  static const std::vector<KeySpec> keys{{"enabled", boolean},
                                         {"nodes", integer},
                                         {"time", string},
                                         {"command", string},
                                         {"script", string},
                                         {"launch", string},
                                         {"args", string},
                                         {"compile_args", string},
                                         {"env", env},
                                         {"max_restarts", integer},
                                         {"signal_grace", integer},
                                         {"preflight", boolean},
                                         {"preflight_checks", string},
                                         {"max_exclusions", integer},
                                         {"preflight_drain", boolean}};
  return keys;
}

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::integer:
      return "an integer";
    case ValueKind::number:
      return "a number";
    case ValueKind::string:
      return "a string";
    case ValueKind::boolean:
      return "true or false";
    case ValueKind::strings:
      return "an array of strings";
    case ValueKind::env:
      return "a table of strings";
  }
  return "a value";
}

const char* example_for(ValueKind kind) {
  switch (kind) {
    case ValueKind::integer:
      return "8";
    case ValueKind::number:
      return "1.5e-4";
    case ValueKind::string:
      return "\"text\"";
    case ValueKind::boolean:
      return "true";
    case ValueKind::strings:
      return "[\"--arg\"]";
    case ValueKind::env:
      return "{ NAME = \"value\" }";
  }
  return "";
}

std::vector<std::string> section_names() {
  std::vector<std::string> out;
  for (const auto& s : section_specs()) out.emplace_back(s.name);
  out.emplace_back("stages");
  return out;
}

std::vector<std::string> key_names(const std::vector<KeySpec>& keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.emplace_back(k.key);
  return out;
}

const std::vector<KeySpec>* keys_of_section(std::string_view section) {
  if (section.starts_with("stages.")) {
    const auto stage = section.substr(7);
    if (std::ranges::find(stage_names, stage) == stage_names.end()) return nullptr;
    return &stage_key_specs();
  }
  for (const auto& s : section_specs())
    if (s.name == section) return &s.keys;
  return nullptr;
}

std::optional<ValueKind> kind_of(std::string_view section, std::string_view key) {
  if (const auto* keys = keys_of_section(section))
    for (const auto& k : *keys)
      if (k.key == key) return k.kind;
  return std::nullopt;
}

std::vector<std::string> sections_holding(std::string_view key, std::string_view except) {
  std::vector<std::string> out;
  for (const auto& s : section_specs())
    if (s.name != except && std::ranges::find(s.keys, key, &KeySpec::key) != s.keys.end())
      out.emplace_back(s.name);
  if (std::ranges::find(stage_key_specs(), key, &KeySpec::key) != stage_key_specs().end() &&
      !except.starts_with("stages."))
    out.emplace_back("stages.<stage>");
  return out;
}

bool has_kind(const toml::node& node, ValueKind kind) {
  switch (kind) {
    case ValueKind::integer:
      return node.is_integer();
    case ValueKind::number:
      return node.is_integer() || node.is_floating_point();
    case ValueKind::string:
      return node.is_string();
    case ValueKind::boolean:
      return node.is_boolean();
    case ValueKind::strings: {
      const auto* array = node.as_array();
      return array != nullptr &&
             std::ranges::all_of(*array, [](const toml::node& n) { return n.is_string(); });
    }
    case ValueKind::env:
      return node.is_table();
  }
  return false;
}

std::vector<std::string> recipe_keys() {
  std::vector<std::string> out;
  for (const auto& s : section_specs())
    for (const auto& k : s.keys) out.push_back(fmt::format("{}.{}", s.name, k.key));
  for (const auto stage : stage_names)
    for (const auto& k : stage_key_specs()) out.push_back(fmt::format("stages.{}.{}", stage, k.key));
  return out;
}

}  // namespace trnslurm
