#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "fixtures.hpp"
#include "plan_fixtures.hpp"
#include "trnslurm/plan/suggest_apply.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;

namespace {

// A bundled recipe written to a file of its own, loaded from it, and its suggestions.
struct RecipeFile {
  test::ScratchDir dir;
  std::filesystem::path path;
  Recipe recipe;
  SuggestResult result;
  DatasetSize dataset = test::rows(10'000'000);

  explicit RecipeFile(const std::string& name) : path(dir / "trnslurm.toml") {
    const auto* b = find_bundled_recipe(name);
    REQUIRE(b != nullptr);
    REQUIRE(write_file_atomic(path, b->text));
    auto r = load_recipe(path);
    if (!r) FAIL(to_string(r.error()));
    recipe = *r;
    auto s = suggest(recipe, dataset, {});
    if (!s) FAIL(to_string(s.error()));
    result = *s;
  }
  // As `trnslurm plan` reloads it: the text, with no overrides.
  RecipeReload reload() const {
    return [p = path.string()](std::string_view text, const std::vector<std::string>&) {
      return load_recipe_text(text, p);
    };
  }
  std::string on_disk() const { return *read_file(path, max_recipe_size); }
};

}  // namespace

TEST_CASE("suggest_apply: the chosen configuration is written and reads back as itself") {
  RecipeFile f("llama3-8b-trn2");
  const auto rank = GENERATE(1, 2, 3);
  REQUIRE(f.result.ranked.size() >= 3);
  const auto& chosen = f.result.ranked[static_cast<std::size_t>(rank) - 1];
  REQUIRE(chosen.memory.fits());
  const auto keys =
      apply_suggestion(f.result, static_cast<std::size_t>(rank), f.recipe, f.dataset, f.reload());
  REQUIRE(keys);
  std::vector<std::string> names;
  for (const auto& k : *keys) names.push_back(k.section + "." + k.key);
  CHECK(std::ranges::find(names, "cluster.nodes") != names.end());
  CHECK(std::ranges::find(names, "train.tp") != names.end());
  CHECK(std::ranges::find(names, "train.pp") != names.end());
  CHECK(std::ranges::find(names, "train.mbs") != names.end());
  const auto again = load_recipe(f.path);
  REQUIRE(again);
  const auto plan = make_plan(*again, f.dataset);
  REQUIRE(plan);
  CHECK(plan->nodes == chosen.config.nodes);
  CHECK(plan->lnc == chosen.lnc);
  CHECK(plan->tp == chosen.config.tp);
  CHECK(plan->pp == chosen.config.pp);
  CHECK(plan->mbs == chosen.config.mbs);
  // The rest of the file is the user's, kept: the model is still the one it names.
  CHECK(again->model.name == f.recipe.model.name);
}

TEST_CASE("suggest_apply: refusals leave the file as it was") {
  RecipeFile f("llama3-70b-trn2");
  const auto before = f.on_disk();
  Result<std::vector<TomlSet>> r;
  SECTION("no such rank") {
    r = apply_suggestion(f.result, f.result.ranked.size() + 1, f.recipe, f.dataset, f.reload());
    REQUIRE_FALSE(r);
    CHECK(r.error().what.starts_with("there is no configuration"));
    CHECK(r.error().kind == ErrorKind::input);
  }
  SECTION("a configuration that does not fit") {
    const auto misfit =
        std::ranges::find_if(f.result.ranked, [](const Suggestion& s) { return !s.memory.fits(); });
    REQUIRE(misfit != f.result.ranked.end());
    r = apply_suggestion(f.result, static_cast<std::size_t>(misfit - f.result.ranked.begin()) + 1, f.recipe,
                         f.dataset, f.reload());
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("does not fit") != std::string::npos);
  }
  SECTION("a recipe without a file") {
    f.recipe.source.clear();
    r = apply_suggestion(f.result, 1, f.recipe, f.dataset, f.reload());
    REQUIRE_FALSE(r);
    CHECK(r.error().what == "the recipe has no file to write");
    CHECK(r.error().kind == ErrorKind::usage);
  }
  SECTION("a text that does not read back as the configuration (an override of a written key)") {
    // Another micro-batch this recipe plans with (its gbs divides by 1 or 2 x dp).
    const std::string other = f.result.ranked[0].config.mbs == 1 ? "2" : "1";
    const auto reload = [p = f.path.string(), other](std::string_view text, const std::vector<std::string>&) {
      return load_recipe_text(text, p, {{"train.mbs", other, ""}});
    };
    r = apply_suggestion(f.result, 1, f.recipe, f.dataset, reload);
    REQUIRE_FALSE(r);
    CHECK(r.error().what == "the written recipe does not read back as the chosen configuration");
  }
  CHECK(f.on_disk() == before);
}

TEST_CASE("suggest_apply: a file edited since it was read is not written over") {
  RecipeFile f("llama3-8b-trn2");
  const auto edited = f.on_disk() + "\n# edited by hand meanwhile\n";
  REQUIRE(write_file_atomic(f.path, edited));
  const auto r = apply_suggestion(f.result, 1, f.recipe, f.dataset, f.reload());
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "the recipe file changed while it was read");
  CHECK(f.on_disk() == edited);
}
