// `trnslurm init NAME`: writes ./trnslurm.toml from a bundled recipe.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "commands.hpp"
#include "output.hpp"
#include "recipe_options.hpp"
#include "trnslurm/recipe/bundled_recipes.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/upstream/interface.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {

Error unknown_recipe(std::string_view name);  // cmd_recipes.cpp

namespace {

struct Options {
  std::string name;
  std::string output = "trnslurm.toml";
  bool force = false;
};

int run(const Options& o) {
  const auto* recipe = find_bundled_recipe(o.name);
  if (recipe == nullptr) {
    return exit_with(unknown_recipe(o.name), ErrorKind::input);
  }
  const std::filesystem::path out = o.output;
  std::error_code ec;
  if (!o.force && std::filesystem::exists(out, ec)) {
    return exit_with(Error{"already exists", out.string(), "pass --force to overwrite it"}, ErrorKind::input);
  }
  if (auto r = write_file_atomic(out, recipe->text, o.force ? Replace::always : Replace::never); !r) {
    // Another process wrote the file since the check above.
    if (!o.force && std::filesystem::exists(out, ec)) {
      return exit_with(Error{"already exists", out.string(), "pass --force to overwrite it"},
                       ErrorKind::input);
    }
    // The output path is the user's: a device or a directory there is bad input.
    return exit_with(r.error(), ErrorKind::input);
  }
  fmt::print("wrote {} from the bundled recipe {}: edit its paths, then run `trnslurm plan`\n", out.string(),
             recipe->name);
  // What its stages run, and where to get it, before a submit refuses for want of it.
  const auto loaded = load_recipe_text(recipe->text, out.string());
  if (!loaded) return exit_ok;
  const auto& u = loaded->upstream;
  fmt::print("{}\n", support_status(u.trainer));
  if (u.package.empty()) return exit_ok;
  if (u.root.starts_with("{{backend_dir}}")) {
    fmt::print("its stages run trnslurm's CPU stand-ins of {} {}'s scripts (scripts/cpu/README.md)\n",
               u.package, u.release);
  } else if (const auto* record = upstream::bundled_interface(u.package, u.release)) {
    fmt::print(
        "its stages run {} {}'s scripts: set [upstream] root to a checkout of {} at commit {}\n"
        "  (git clone {} {} && git -C {} checkout {}), and venv to the Neuron virtual environment\n",
        u.package, u.release, record->repository, record->commit, record->repository, u.root, u.root,
        record->commit);
  }
  return exit_ok;
}

}  // namespace

Command add_init(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("init", "Write ./trnslurm.toml from a bundled recipe");
  sub->add_option("name", opts->name, "Bundled recipe (see `trnslurm recipes`)")->required();
  sub->add_option("-o,--output", opts->output, "Where to write it (default: ./trnslurm.toml)");
  sub->add_flag("-f,--force", opts->force, "Overwrite an existing file");
  sub->footer(
      "Exit code: 0 written, 1 could not write, 2 unknown recipe or the file exists (without --force).\n"
      "Examples:\n"
      "  trnslurm init qwen3-8b-trn2\n"
      "  trnslurm init tiny-cpu -o cpu.toml && trnslurm plan -r cpu.toml");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
