#pragma once
// The recipe's schema: every section, its keys and the kind of value each holds. Loading,
// overrides and error hints all read these tables, so a key is added in one place.

#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnslurm {

enum class ValueKind { integer, number, string, boolean, strings, env };

// The keys only one trainer reads (recipe.hpp, Trainer): written in a recipe of the other
// track, they are refused rather than silently ignored.
enum class KeyTrack { any, nxd, torchtitan };

struct KeySpec {
  std::string_view key;
  ValueKind kind;
  KeyTrack track = KeyTrack::any;
};

struct SectionSpec {
  std::string_view name;
  std::vector<KeySpec> keys;
};

// The sections other than [stages.<name>], in the order docs/recipe.md lists them.
const std::vector<SectionSpec>& section_specs();
// The keys of every [stages.<name>] section.
const std::vector<KeySpec>& stage_key_specs();

// "an integer", "a string", ...: how an error names what a key expects.
const char* kind_name(ValueKind kind);
// A value of that kind, for "write it as `key = 8`" hints.
const char* example_for(ValueKind kind);
bool has_kind(const toml::node& node, ValueKind kind);

// Every section name, "stages" included.
std::vector<std::string> section_names();
std::vector<std::string> key_names(const std::vector<KeySpec>& keys);
// The keys of "model", "stages.train", ...; nullptr for an unknown section or stage.
const std::vector<KeySpec>* keys_of_section(std::string_view section);
std::optional<ValueKind> kind_of(std::string_view section, std::string_view key);
// The sections (other than `except`) that hold a key of that name: "tp" -> "train".
std::vector<std::string> sections_holding(std::string_view key, std::string_view except);

}  // namespace trnslurm
