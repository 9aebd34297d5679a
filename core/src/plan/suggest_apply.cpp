#include "trnslurm/plan/suggest_apply.hpp"

#include <fmt/format.h>

#include "trnslurm/util/file.hpp"

namespace trnslurm {

std::vector<TomlSet> suggestion_keys(const Suggestion& s, const InstanceType& type) {
  std::vector<TomlSet> sets{{"cluster", "nodes", fmt::format("{}", s.config.nodes)}};
  if (!type.cpu() && type.lnc.value && type.lnc.value->size() > 1)
    sets.push_back({"cluster", "lnc", fmt::format("{}", s.lnc)});
  sets.push_back({"train", "tp", fmt::format("{}", s.config.tp)});
  sets.push_back({"train", "pp", fmt::format("{}", s.config.pp)});
  sets.push_back({"train", "mbs", fmt::format("{}", s.config.mbs)});
  return sets;
}

Result<std::vector<TomlSet>> apply_suggestion(const SuggestResult& result, std::size_t rank,
                                              const Recipe& recipe, const DatasetSize& dataset,
                                              const RecipeReload& reload) {
  if (rank == 0 || rank > result.ranked.size())
    return fail(ErrorKind::input,
                fmt::format("there is no configuration {}: the search ranked {}", rank, result.ranked.size()),
                "--apply", "give a rank the table shows");
  const auto& s = result.ranked[rank - 1];
  if (!s.memory.fits())
    return fail(ErrorKind::input,
                fmt::format("configuration {} does not fit: {} per core of {}", rank,
                            format_bytes(s.memory.total), format_bytes(s.memory.capacity)),
                "--apply", "choose one that fits (they rank first)");
  if (recipe.source.empty())
    return fail(ErrorKind::usage, "the recipe has no file to write", "--apply", "give -r PATH");
  const auto* type = recipe.instances.find(recipe.cluster.instance);
  if (type == nullptr)
    return fail(ErrorKind::input, "unknown instance type", recipe.where("cluster.instance"));
  // Written over only as it was read: an edit made since would be lost.
  const auto on_disk = read_file(recipe.source, max_recipe_size);
  if (!on_disk || *on_disk != recipe.file_text)
    return fail(ErrorKind::input, "the recipe file changed while it was read", recipe.source.string(),
                "run the command again");
  const auto sets = suggestion_keys(s, *type);
  auto text = set_toml_values(recipe.file_text, recipe.source.string(), sets);
  if (!text) return std::unexpected(classified(text.error(), ErrorKind::input));
  std::vector<std::string> written;
  written.reserve(sets.size());
  for (const auto& k : sets) written.push_back(k.section + "." + k.key);
  // The file must say what was chosen: read back and planned again before it is written.
  auto reread = reload(*text, written);
  if (!reread) return std::unexpected(classified(reread.error(), ErrorKind::input));
  const auto planned = make_plan(*reread, dataset);
  if (!planned) return std::unexpected(classified(planned.error(), ErrorKind::input));
  if (planned->nodes != s.config.nodes || planned->lnc != s.lnc || planned->tp != s.config.tp ||
      planned->pp != s.config.pp || planned->mbs != s.config.mbs)
    return fail(ErrorKind::input, "the written recipe does not read back as the chosen configuration",
                recipe.source.string(), "edit the file by hand");
  if (auto w = write_file_atomic(recipe.source, *text); !w)
    return std::unexpected(classified(w.error(), ErrorKind::input));
  return sets;
}

}  // namespace trnslurm
