#include "trainer_help.hpp"

#include "install_paths.hpp"
#include "process.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "trnslurm/chain/upstream_stage.hpp"
#include "trnslurm/upstream/installed_help.hpp"

namespace trnslurm::cli {

Result<TrainerCheck> check_installed_trainer(const Recipe& recipe) {
  TrainerCheck out;
  const auto& train = recipe.stage("train");
  if (train.script.empty() || !recipe.upstream.package.starts_with("torchtitan")) return out;
  auto values = recipe.values;
  values["backend_dir"] = backend_dir().string();
  if (auto r = render_upstream_paths(recipe, values); !r) return std::unexpected(r.error());
  const auto root = values.contains("upstream.root") ? values.at("upstream.root") : std::string();
  const auto venv = values.contains("upstream.venv") ? values.at("upstream.venv") : std::string();
  const auto ask = upstream::trainer_help_argv(train.script, root, venv);
  std::vector<std::string> on_node{"srun", "-N1", "-n1", "--immediate=30", "--time=1", "--quiet"};
  on_node.insert(on_node.end(), ask.begin(), ask.end());
  auto ran = run_process(on_node);
  out.where = "a compute node (srun)";
  if (!ran || ran->exit_code != 0) {
    std::error_code ec;
    if (venv.empty() || !std::filesystem::exists(venv + "/bin/python3", ec))
      return fail(fmt::format("could not ask the installed trainer: {}",
                              ran ? ran->err.substr(0, ran->err.find('\n')) : ran.error().what),
                  recipe.where("upstream.venv"),
                  "run doctor where srun can start a one-minute step, or on a node that has the venv");
    ran = run_process(ask);
    out.where = "this host";
    if (!ran) return std::unexpected(ran.error());
    if (ran->exit_code != 0)
      return fail(fmt::format("the installed trainer's --help exited {}: {}", ran->exit_code,
                              ran->err.substr(0, ran->err.find('\n'))),
                  fmt::format("{} -m ... --help", ask[2]),
                  "check the recipe's upstream.venv and upstream.root");
  }
  out.asked = true;
  out.not_listed = upstream::options_not_in_help(ran->out, upstream::options_given(train.args));
  return out;
}

}  // namespace trnslurm::cli
