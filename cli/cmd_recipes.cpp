// `trnslurm recipes [NAME]`: lists the bundled recipes, or prints one.
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "recipe_options.hpp"
#include "trnslurm/bundled_recipes.hpp"
#include "trnslurm/suggest.hpp"

namespace trnslurm::cli {

namespace {
struct RecipesArgs {
  std::string name;
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
  sub->footer("Start from one with `trnslurm init NAME`.");
  return {sub, [args] {
            if (!args->name.empty()) {
              const auto* r = find_bundled_recipe(args->name);
              if (r == nullptr) {
                print_error(unknown_recipe(args->name));
                return exit_usage;
              }
              std::fwrite(r->text.data(), 1, r->text.size(), stdout);
              return exit_ok;
            }
            std::size_t width = 0;
            for (const auto& r : bundled_recipes()) width = std::max(width, r.name.size());
            for (const auto& r : bundled_recipes()) fmt::print("{:<{}}  {}\n", r.name, width, r.summary);
            return exit_ok;
          }};
}

}  // namespace trnslurm::cli
