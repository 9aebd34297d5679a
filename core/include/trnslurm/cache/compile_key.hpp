#pragma once
// The compile key (docs/cache.md): a hash of exactly what changes the graphs the Neuron compiler
// builds for a recipe's training run, so that a chain whose key is already in the cache skips
// its precompile, and two chains of one key never compile at once.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// One input of the key: its name, its value as hashed, and why it changes the graphs.
struct KeyInput {
  std::string name;
  std::string value;
  std::string why;
};

struct CompileKey {
  std::string hex;  // 16 hex digits: the first 64 bits of the SHA-256 of the inputs
  std::vector<KeyInput> inputs;
};

// What the key reads from files rather than from the recipe: the model's config.json text
// (nullopt: not readable where the key is computed) and the Neuron compiler's version found in
// the virtual environment ("" = none found).
struct KeyFiles {
  std::optional<std::string> model_config;
  std::string compiler_version;
};
// Reads <model.config>/config.json and <venv>/lib/python*/site-packages/neuronx_cc-*.dist-info.
KeyFiles read_key_files(const Recipe& recipe, const std::filesystem::path& venv);

// The key of the recipe's train stage under `plan`. Refuses a recipe whose precompile or train
// stage names a cache of its own (NEURON_COMPILE_CACHE_URL, --cache_dir in NEURON_CC_FLAGS)
// while cache.enabled: the two stages would not share the cache the key is recorded in.
Result<CompileKey> compile_key(const Recipe& recipe, const Plan& plan, const KeyFiles& files);

// Whether `text` can be a key (hex digits only, 16 of them): keys name directories.
bool is_compile_key(std::string_view text);

}  // namespace trnslurm
