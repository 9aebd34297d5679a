// `trnslurm recipes [NAME]`: lists the bundled recipes, or prints one.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "commands.hpp"
#include "output.hpp"
#include "recipe_options.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"
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

struct Options {
  std::string name;
  bool json = false;
};

int run(const Options& o) {
  if (!o.name.empty()) {
    const auto* r = find_bundled_recipe(o.name);
    if (r == nullptr) {
      print_error(unknown_recipe(o.name));
      return exit_usage;
    }
    if (o.json) {
      const nlohmann::json j{{"name", r->name}, {"summary", r->summary}, {"text", r->text}};
      fmt::print("{}\n", j.dump(2));
    } else {
      (void)std::fwrite(r->text.data(), 1, r->text.size(), stdout);
    }
    return exit_ok;
  }
  if (o.json) {
    auto j = nlohmann::json::array();
    for (const auto& r : bundled_recipes()) j.push_back({{"name", r.name}, {"summary", r.summary}});
    fmt::print("{}\n", j.dump(2));
    return exit_ok;
  }
  std::size_t width = 0;
  for (const auto& r : bundled_recipes()) width = std::max(width, r.name.size());
  for (const auto& r : bundled_recipes()) fmt::print("{:<{}}  {}\n", r.name, width, r.summary);
  return exit_ok;
}

}  // namespace

Command add_recipes(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("recipes", "List the bundled recipes, or print one");
  sub->add_option("name", opts->name, "Print this recipe's TOML");
  sub->add_flag("--json", opts->json, "Print name and summary (and with NAME, the TOML text) as JSON");
  sub->footer(
      "Start from one with `trnslurm init NAME`.\n"
      "Examples:\n"
      "  trnslurm recipes\n"
      "  trnslurm recipes llama2-7b-trn1 | less\n"
      "  trnslurm recipes --json | jq -r '.[].name'");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
