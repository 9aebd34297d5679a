// `trnslurm recipes [NAME]`: lists the bundled recipes, or prints one.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "commands.hpp"
#include "output.hpp"
#include "recipe_options.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm::cli {

Error unknown_recipe(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& r : bundled_recipes()) names.emplace_back(r.name);
  const auto close = closest_match(name, names);
  return Error{fmt::format("no bundled recipe named '{}'", name), "NAME",
               close ? fmt::format("did you mean '{}'? `trnslurm recipes` lists them", *close)
                     : "`trnslurm recipes` lists them"};
}

namespace {

// A bundled recipe's track (docs/recipe.md, "Tracks"): its [upstream] as it loads.
struct RecipeTrack {
  Trainer trainer = Trainer::nxd;
  std::string upstream;  // "torchtitan-neuron 2.33"
};
RecipeTrack recipe_track(const BundledRecipe& r) {
  RecipeTrack t;
  if (const auto loaded = load_recipe_text(r.text, std::string(r.name) + ".toml")) {
    t.trainer = loaded->upstream.trainer;
    t.upstream = fmt::format("{} {}", package_of(t.trainer), loaded->upstream.release);
  }
  return t;
}

nlohmann::json track_json(const BundledRecipe& r) {
  const auto t = recipe_track(r);
  return {{"name", r.name},
          {"summary", r.summary},
          {"track", track_of(t.trainer)},
          {"upstream", t.upstream},
          {"status", support_status(t.trainer)}};
}

struct Options {
  std::string name;
  bool json = false;
};

int run(const Options& o) {
  if (!o.name.empty()) {
    const auto* r = find_bundled_recipe(o.name);
    if (r == nullptr) {
      return exit_with(unknown_recipe(o.name), ErrorKind::input);
    }
    if (o.json) {
      auto j = track_json(*r);
      j["text"] = r->text;
      fmt::print("{}\n", j.dump(2));
    } else {
      (void)std::fwrite(r->text.data(), 1, r->text.size(), stdout);
    }
    return exit_ok;
  }
  if (o.json) {
    auto j = nlohmann::json::array();
    for (const auto& r : bundled_recipes()) j.push_back(track_json(r));
    fmt::print("{}\n", j.dump(2));
    return exit_ok;
  }
  // One line a recipe, its name first (completion and scripts read the first column): the
  // track, the upstream release it names, its summary.
  std::size_t width = 0;
  std::size_t upstream_width = 0;
  std::vector<RecipeTrack> tracks;
  for (const auto& r : bundled_recipes()) {
    width = std::max(width, r.name.size());
    tracks.push_back(recipe_track(r));
    upstream_width = std::max(upstream_width, tracks.back().upstream.size());
  }
  std::size_t i = 0;
  for (const auto& r : bundled_recipes()) {
    const auto& t = tracks[i++];
    fmt::print("{:<{}}  {:<7}  {:<{}}  {}\n", r.name, width, track_of(t.trainer), t.upstream, upstream_width,
               r.summary);
  }
  return exit_ok;
}

}  // namespace

Command add_recipes(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("recipes", "List the bundled recipes, or print one");
  sub->add_option("name", opts->name, "Print this recipe's TOML");
  sub->add_flag("--json", opts->json, "Print name and summary (and with NAME, the TOML text) as JSON");
  sub->footer(
      "Each line: NAME, TRACK, UPSTREAM, SUMMARY. Tracks (docs/recipe.md, \"Tracks\"):\n"
      "  current  TorchTitan Neuron on TorchNeuron: trn2, trn3 (Neuron 2.33, beta)\n"
      "  legacy   neuronx-distributed on PyTorch/XLA: Neuron 2.28 is the last release that supports it\n"
      "           (trn1 has no other track)\n"
      "Start from one with `trnslurm init NAME`.\n"
      "Examples:\n"
      "  trnslurm recipes\n"
      "  trnslurm recipes llama2-7b-trn1 | less\n"
      "  trnslurm recipes --json | jq -r '.[].name'");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
