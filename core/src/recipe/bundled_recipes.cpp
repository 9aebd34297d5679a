#include "trnslurm/recipe/bundled_recipes.hpp"

#include <algorithm>

namespace trnslurm {

namespace {
// The first "# ..." line, without the marker.
std::string_view summary_of(std::string_view text) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    if (line.starts_with("# ")) return line.substr(2);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return {};
}
}  // namespace

std::vector<BundledRecipe> bundled_recipes() {
  std::vector<BundledRecipe> out;
  for (const auto& r : detail::bundled_recipe_texts()) out.push_back({r.name, summary_of(r.text), r.text});
  return out;
}

const BundledRecipe* find_bundled_recipe(std::string_view name) {
  static const std::vector<BundledRecipe> all = bundled_recipes();
  const auto it = std::ranges::find(all, name, &BundledRecipe::name);
  return it == all.end() ? nullptr : &*it;
}

}  // namespace trnslurm
