// `trnslurm instances [NAME]`: every instance type trnslurm knows (bundled, the site's file,
// the recipe's own), with its figures, where each comes from and whether a public source
// confirms it (docs/instances.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "commands.hpp"
#include "output.hpp"
#include "site_config.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm::cli {

namespace {

struct InstancesArgs {
  std::string name;
  std::string recipe;
  std::optional<std::string> plugstack;
  bool json = false;
};

// The table with the recipe's own types: the one given, else ./trnslurm.toml when there is one.
Result<InstanceTable> known_types(const InstancesArgs& a) {
  const auto cfg = load_site_config(a.plugstack);
  auto table = site_instance_table(cfg);
  if (!table) return table;
  const std::string path = a.recipe.empty() ? "trnslurm.toml" : a.recipe;
  if (a.recipe.empty() && !std::filesystem::exists(path)) return table;
  auto recipe = load_recipe(path, {}, *table);
  if (!recipe) return std::unexpected(recipe.error());
  return std::move(recipe->instances);
}

// A figure's value, marked when no public source confirms it.
std::string cell(const InstanceType& t, std::string_view key) {
  const auto* info = figure_info(t, key);
  const auto text = figure_text(t, key);
  if (text == "unknown") return "?";
  return info != nullptr && !info->confirmed ? text + "*" : text;
}

void print_table(const InstanceTable& table) {
  std::vector<std::vector<std::string>> rows{{"type", "from", "devices", "cores", "lnc", "hbm GiB", "bf16 TF",
                                              "vcpus", "host GiB", "efa", "efa Gbps", "ultra"}};
  for (const auto& t : table.types()) {
    if (t.cpu()) {
      rows.push_back(
          {t.name, std::string(to_string(t.origin)), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"});
      continue;
    }
    const std::string lnc =
        t.lnc_default.value ? fmt::format("{} ({})", cell(t, "lnc"), *t.lnc_default.value) : cell(t, "lnc");
    rows.push_back({t.name, std::string(to_string(t.origin)), cell(t, "devices"), cell(t, "cores_per_device"),
                    lnc, cell(t, "hbm_gib_per_device"), cell(t, "bf16_tflops_per_device"), cell(t, "vcpus"),
                    cell(t, "host_memory_gib"), cell(t, "efa_devices"), cell(t, "efa_gbps"),
                    t.ultraserver_nodes.value ? cell(t, "ultraserver_nodes") : "-"});
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i)
      line += i < 2 ? fmt::format("{:<{}}  ", r[i], width[i]) : fmt::format("{:>{}}  ", r[i], width[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
  }
  fmt::print(
      "\ndevices: Neuron devices; cores: physical NeuronCores per device; lnc: accepted (default); hbm, bf16 "
      "TF: "
      "per device; efa: EFA devices; ultra: servers per UltraServer.\n"
      "* no public source confirms it; ? unknown. `trnslurm instances NAME` gives each figure's source.\n");
  for (const auto& n : table.notes()) fmt::print("note: {}\n", n);
}

std::string source_text(const InstanceSource& s) {
  std::string where = s.url;
  if (!s.repo.empty())
    where += fmt::format("{}{} {}{}", where.empty() ? "" : "; ", s.repo, s.path,
                         s.commit.empty() ? "" : " @ " + s.commit.substr(0, 12));
  return fmt::format("{} ({})", s.title.empty() ? s.id : s.title, where);
}

void print_type(const InstanceTable& table, const InstanceType& t) {
  fmt::print("{}: {} definition at {}\n", t.name, to_string(t.origin), to_string(t.at));
  if (!t.replaces.empty()) fmt::print("  replaces {}\n", t.replaces);
  for (const auto& key : instance_figure_keys()) {
    const auto* info = figure_info(t, key);
    if (info == nullptr || (info->at.file.empty() && figure_json(t, key).is_null())) continue;
    std::string from =
        info->source.empty() ? fmt::format("written at {}", to_string(info->at)) : info->source;
    if (const auto* s = table.source(info->source)) from = source_text(*s);
    fmt::print("  {:<26} {:>8}  {}  {}\n", key, figure_text(t, key),
               info->confirmed ? "confirmed  " : "UNCONFIRMED", from);
    if (!info->note.empty()) fmt::print("  {:<26} {:>8}  {}\n", "", "", info->note);
  }
}

int run(const InstancesArgs& a) {
  auto table = known_types(a);
  if (!table) {
    return exit_with(table.error(), ErrorKind::input);
  }
  const InstanceType* one = nullptr;
  if (!a.name.empty()) {
    one = table->find(a.name);
    if (one == nullptr) {
      const auto close = closest_match(a.name, table->names());
      return exit_with(
          {fmt::format("no instance type named '{}'", a.name), "NAME",
           close ? fmt::format("did you mean '{}'?", *close) : "`trnslurm instances` lists them"},
          ErrorKind::input);
    }
  }
  if (a.json) {
    const auto j = to_json(*table);
    nlohmann::json out = j;
    if (one != nullptr)
      for (const auto& t : j.at("instances"))
        if (t.at("name") == one->name) out = t;
    fmt::print("{}\n", out.dump(2));
    return exit_ok;
  }
  if (one != nullptr)
    print_type(*table, *one);
  else
    print_table(*table);
  return exit_ok;
}

}  // namespace

Command add_instances(CLI::App& app) {
  auto args = std::make_shared<InstancesArgs>();
  auto* sub = app.add_subcommand("instances", "List the instance types and their figures, with sources");
  sub->add_option("name", args->name,
                  "Show every figure of this type, its source and whether it is confirmed");
  sub->add_option("-r,--recipe", args->recipe,
                  "Include this recipe's own [instances] (default: ./trnslurm.toml when it exists)")
      ->type_name("PATH");
  sub->add_option(
         "--plugstack", args->plugstack,
         "plugstack.conf whose instances= names the site's file (default: slurm.conf's PlugStackConfig)")
      ->type_name("FILE");
  sub->add_flag("--json", args->json, "Print the types (or NAME), their figures and the sources as JSON");
  sub->footer(
      "Types come from the bundled table, the site's file (plugstack instances=) and the recipe; "
      "docs/instances.md.\n"
      "Examples:\n"
      "  trnslurm instances\n"
      "  trnslurm instances trn3.48xlarge\n"
      "  trnslurm instances --json | jq -r '.instances[] | select(.origin == \"site\") | .name'");
  return {sub, [args] { return run(*args); }};
}

}  // namespace trnslurm::cli
