// `trnslurm init NAME`: writes ./trnslurm.toml from a bundled recipe.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "commands.hpp"
#include "recipe_options.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"

namespace trnslurm::cli {

Error unknown_recipe(std::string_view name);  // cmd_recipes.cpp

namespace {
struct InitArgs {
  std::string name;
  std::string output = "trnslurm.toml";
  bool force = false;
};

// Writes beside the target, then renames (--force) or hard-links (no clobber: link() fails when
// the target exists, even if it appeared after the check), so a failure or a race never leaves
// half a recipe or overwrites one.
Result<void> write_file(const std::filesystem::path& path, std::string_view text, bool force) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush())
      return fail("cannot write the recipe", tmp.string(), "check that the directory exists and is writable");
  }
  std::error_code ec;
  if (force) {
    std::filesystem::rename(tmp, path, ec);
  } else {
    std::filesystem::create_hard_link(tmp, path, ec);
    std::error_code ignored;
    if (ec == std::errc::file_exists) {
      std::filesystem::remove(tmp, ignored);
      return fail("already exists", path.string(), "pass --force to overwrite it");
    }
    if (ec && !std::filesystem::exists(path, ignored)) {
      std::filesystem::rename(tmp, path, ec);  // a filesystem without hard links
    } else {
      std::filesystem::remove(tmp, ignored);
    }
  }
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return fail("cannot write the recipe", path.string(), "check that the directory is writable");
  }
  return {};
}
}  // namespace

Command add_init(CLI::App& app) {
  auto args = std::make_shared<InitArgs>();
  auto* sub = app.add_subcommand("init", "Write ./trnslurm.toml from a bundled recipe");
  sub->add_option("name", args->name, "Bundled recipe (see `trnslurm recipes`)")->required();
  sub->add_option("-o,--output", args->output, "Where to write it (default: ./trnslurm.toml)");
  sub->add_flag("-f,--force", args->force, "Overwrite an existing file");
  sub->footer(
      "Exit code: 0 written, 1 could not write, 2 unknown recipe or the file exists (without --force).\n"
      "Examples:\n"
      "  trnslurm init llama3-8b-trn2\n"
      "  trnslurm init tiny-cpu -o cpu.toml && trnslurm plan -r cpu.toml");
  return {sub, [args] {
            const auto* recipe = find_bundled_recipe(args->name);
            if (recipe == nullptr) {
              print_error(unknown_recipe(args->name));
              return exit_usage;
            }
            const std::filesystem::path out = args->output;
            std::error_code ec;
            if (!args->force && std::filesystem::exists(out, ec)) {
              print_error(Error{"already exists", out.string(), "pass --force to overwrite it"});
              return exit_usage;
            }
            if (auto r = write_file(out, recipe->text, args->force); !r) {
              print_error(r.error());
              return r.error().what == "already exists" ? exit_usage : exit_failure;
            }
            fmt::print("wrote {} from the bundled recipe {}: edit its paths, then run `trnslurm plan`\n",
                       out.string(), recipe->name);
            return exit_ok;
          }};
}

}  // namespace trnslurm::cli
