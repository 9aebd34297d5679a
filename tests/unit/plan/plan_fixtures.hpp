#pragma once
// What the plan's tests share: a bundled recipe loaded with overrides, a dataset of N rows.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

namespace trnslurm::test {

inline Recipe bundled_recipe(const std::string& name, const std::vector<Override>& overrides = {}) {
  const auto* b = find_bundled_recipe(name);
  REQUIRE(b != nullptr);
  auto r = load_recipe_text(b->text, name + ".toml", overrides);
  if (!r) FAIL(to_string(r.error()));
  return *r;
}

inline DatasetSize rows(std::uint64_t n) {
  DatasetSize size;
  size.samples = n;
  size.format = "given";
  return size;
}

}  // namespace trnslurm::test
