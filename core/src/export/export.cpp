#include "trnslurm/export/export.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <system_error>

#include "../recipe/slurm_time.hpp"
#include "export_texts.hpp"
#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/export/task_env_script.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string_view export_text(std::string_view name) {
  const auto texts = detail::export_texts();
  const auto it = std::ranges::find(texts, name, &detail::ExportText::name);
  return it == texts.end() ? std::string_view{} : it->text;
}

bool word_end(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')';
}

// Every option of every srun word in a rendered script is one the exported entry point runs.
Result<void> check_srun(const std::string& stage, const std::string& script, const std::string& where) {
  for (auto at = script.find("srun"); at != std::string::npos; at = script.find("srun", at + 4)) {
    const auto end = at + 4;
    if ((at > 0 && !word_end(script[at - 1])) || end >= script.size() ||
        (script[end] != ' ' && script[end] != '\t'))
      continue;
    auto i = end;
    for (;;) {
      while (i < script.size() &&
             (script[i] == ' ' || script[i] == '\t' || script[i] == '\\' || script[i] == '\n'))
        ++i;
      if (i >= script.size() || script[i] != '-') break;
      const auto stop = script.find_first_of(" \t\n", i);
      const auto option = script.substr(i, stop == std::string::npos ? std::string::npos : stop - i);
      if (option == "--") break;
      if (std::ranges::find(exported_srun_options(), option) == exported_srun_options().end())
        return fail(
            fmt::format("stage {} runs srun {}, which has no equivalent outside Slurm: an exported stage "
                        "runs one task on each node of its job",
                        stage, option),
            where,
            fmt::format("use only {} in the stage's command", fmt::join(exported_srun_options(), ", ")));
      i = stop == std::string::npos ? script.size() : stop;
    }
  }
  return {};
}

std::string top_dir(const fs::path& p) {
  if (!p.is_absolute()) return {};
  auto it = p.begin();
  if (it == p.end() || ++it == p.end()) return {};
  return (fs::path("/") / *it).string();
}

}  // namespace

std::vector<std::string> shared_mounts(const Recipe& recipe, const fs::path& run_dir,
                                       const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  const auto add = [&](const std::string& dir) {
    if (!dir.empty() && std::ranges::find(out, dir) == out.end()) out.push_back(dir);
  };
  add(top_dir(run_dir));
  if (is_local_dir(recipe.checkpoint.dir)) add(top_dir(recipe.checkpoint.dir));
  add(top_dir(recipe.dataset.path));
  add(top_dir(recipe.upstream.root));
  for (const auto& e : extra) {
    auto p = fs::path(e).lexically_normal();
    if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();  // "/home/"
    add(p.string());
  }
  return out;
}

Result<Export> export_chain(const Recipe& recipe, const Plan& plan, const ExportRequest& request,
                            const std::string& chain_id) {
  const auto& opts = request.batch;
  if (opts.image.empty())
    return fail("no container image given", "--image", "give the image every node runs: --image URI");
  if (opts.job_queue.empty())
    return fail("no job queue given", "--job-queue", "give the AWS Batch job queue: --job-queue NAME");
  const auto* type = recipe.instances.find(recipe.cluster.instance);
  if (type == nullptr)
    return fail(fmt::format("unknown instance type {}", recipe.cluster.instance),
                recipe.where("cluster.instance"));
  const fs::path run_dir = request.runs_dir / chain_id;
  const auto plan_doc = to_json(plan);
  auto inputs = chain_inputs_from_recipe(recipe, plan_doc, chain_id, run_dir, request.site);
  if (!inputs) return std::unexpected(inputs.error());
  inputs->host = JobHost::container;
  auto chain = render_chain(*inputs);
  if (!chain) return std::unexpected(chain.error());
  auto env = task_env_script(*type, EnvSettings{});
  if (!env) return std::unexpected(env.error());
  const auto entry = export_text("batch_entry");
  if (entry.empty()) return fail("the AWS Batch entry point is not compiled in", "trnslurm build");

  Export out{chain_id, run_dir, {}, {}, {}};
  if (!type->cpu() && !type->efa_devices.value)
    out.notes.push_back(
        fmt::format("the instance table does not know how many EFA interfaces {} has: the job "
                    "definitions map no /dev/infiniband/uverbs device and the nodes run without "
                    "EFA; add the devices by hand (launch-template.md)",
                    type->name));
  BatchOptions batch = opts;
  batch.mounts = shared_mounts(recipe, run_dir, opts.mounts);
  const std::string dir = "aws-batch";
  const auto entry_path = (run_dir / dir / "entry.sh").string();
  std::vector<BatchStage> stages;
  for (const auto& stage : chain->stages) {
    const auto where = recipe.where(fmt::format("stages.{}", stage.name));
    if (auto ok = check_srun(stage.name, stage.script, where); !ok) return std::unexpected(ok.error());
    BatchStage b{stage.name, stage.nodes, 0, std::nullopt};
    if (!stage.time.empty()) {
      const auto seconds = slurm_time_seconds(stage.time);
      if (seconds) b.seconds = *seconds;  // UNLIMITED: no timeout
    }
    const auto src = std::ranges::find(inputs->stages, stage.name, &StageInput::name);
    if (src != inputs->stages.end() && src->resilience) {
      const auto wanted = src->resilience->max_restarts + 1;
      b.attempts = std::min(wanted, batch_max_attempts);
      if (wanted > batch_max_attempts)
        out.notes.push_back(
            fmt::format("stage {}: max_restarts = {} is more than AWS Batch retries: {} attempts", stage.name,
                        src->resilience->max_restarts, batch_max_attempts));
    }
    auto def = batch_job_definition(chain_id, b, *type, batch, {"/bin/bash", entry_path, stage.name});
    if (!def) return std::unexpected(def.error());
    out.files.push_back({fmt::format("{}/stages/{}.sh", dir, stage.name), stage.script, true});
    out.files.push_back(
        {fmt::format("{}/job-definitions/{}.json", dir, stage.name), def->dump(2) + "\n", false});
    out.files.push_back({fmt::format("{}/submit-requests/{}.json", dir, stage.name),
                         batch_submit_request(chain_id, stage.name, batch).dump(2) + "\n", false});
    out.stages.push_back(stage.name);
    stages.push_back(std::move(b));
  }
  out.files.push_back({dir + "/entry.sh", std::string(entry), true});
  out.files.push_back({dir + "/task-env.sh", std::move(*env), false});
  out.files.push_back({dir + "/submit.sh", batch_submit_script(chain_id, stages), true});
  out.files.push_back({dir + "/launch-template.md", batch_launch_notes(*type, batch), false});
  out.files.push_back({"recipe.toml", recipe.text, false});
  out.files.push_back({"plan.json",
                       with_chain_dirs(plan_doc, chain_dirs(recipe.checkpoint, chain_id)).dump(2) + "\n",
                       false});
  return out;
}

Result<void> write_export(const Export& exported) {
  const auto& dir = exported.run_dir;
  std::error_code ec;
  if (fs::exists(dir, ec))
    return fail("the run directory exists already", dir.string(),
                "export again: each export has a new chain id");
  const auto tmp = dir.parent_path() / fmt::format(".{}.export-tmp", dir.filename().string());
  fs::create_directories(dir.parent_path(), ec);
  if (ec)
    return fail(fmt::format("cannot create the runs directory: {}", ec.message()),
                dir.parent_path().string());
  const auto cleanup = [&] {
    std::error_code e;
    fs::remove_all(tmp, e);
  };
  cleanup();
  for (const auto& f : exported.files) {
    const auto path = tmp / f.path;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      cleanup();
      return fail(fmt::format("cannot create a directory: {}", ec.message()), path.parent_path().string());
    }
    if (auto w = write_new_file(path, f.text, f.executable ? 0755 : 0644); !w) {
      cleanup();
      return w;
    }
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    cleanup();
    return fail(fmt::format("cannot move the export into place: {}", ec.message()), dir.string());
  }
  return {};
}

}  // namespace trnslurm
