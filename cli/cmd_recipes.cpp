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

namespace {
struct RecipesArgs {
  std::string name;
  bool json = false;
};
}  // namespace

Error unknown_recipe(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& r : bundled_recipes()) names.emplace_back(r.name);
  const auto close = closest_match(name, names);
  return Error{fmt::format("no bundled recipe named '{}'", name), "NAME",
               close ? fmt::format("did you mean '{}'? `trnslurm recipes` lists them", *close)
                     : "`trnslurm recipes` lists them"};
}

Command add_recipes(CLI::App& app) {
  auto args = std::make_shared<RecipesArgs>();
  auto* sub = app.add_subcommand("recipes", "List the bundled recipes, or print one");
  sub->add_option("name", args->name, "Print this recipe's TOML");
  sub->add_flag("--json", args->json, "Print name and summary (and with NAME, the TOML text) as JSON");
  sub->footer(
      "Start from one with `trnslurm init NAME`.\n"
      "Examples:\n"
      "  trnslurm recipes\n"
      "  trnslurm recipes llama2-7b-trn1 | less\n"
      "  trnslurm recipes --json | jq -r '.[].name'");
  return {sub, [args] {
            if (!args->name.empty()) {
              const auto* r = find_bundled_recipe(args->name);
              if (r == nullptr) {
                print_error(unknown_recipe(args->name));
                return exit_usage;
              }
              if (args->json) {
                const nlohmann::json j{{"name", r->name}, {"summary", r->summary}, {"text", r->text}};
                fmt::print("{}\n", j.dump(2));
              } else {
                (void)std::fwrite(r->text.data(), 1, r->text.size(), stdout);
              }
              return exit_ok;
            }
            if (args->json) {
              auto j = nlohmann::json::array();
              for (const auto& r : bundled_recipes()) j.push_back({{"name", r.name}, {"summary", r.summary}});
              fmt::print("{}\n", j.dump(2));
              return exit_ok;
            }
            std::size_t width = 0;
            for (const auto& r : bundled_recipes()) width = std::max(width, r.name.size());
            for (const auto& r : bundled_recipes()) fmt::print("{:<{}}  {}\n", r.name, width, r.summary);
            return exit_ok;
          }};
}

}  // namespace trnslurm::cli
