// Recipe loading and validation: any text, plus a `--set` override taken from after a NUL.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "trnslurm/recipe/recipe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = trnslurm::fuzz::split(trnslurm::fuzz::as_text(data, size), '\0');
  std::vector<trnslurm::Override> overrides;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (auto o = trnslurm::parse_override(parts[i])) overrides.push_back(*o);
  }
  auto recipe = trnslurm::load_recipe_text(parts[0], "fuzz.toml", overrides);
  if (recipe) {
    // What the CLI does with a valid recipe: positions are looked up for messages.
    for (const auto& key : trnslurm::recipe_keys()) (void)recipe->where(key);
  } else {
    (void)trnslurm::to_string(recipe.error());
  }
  return 0;
}
