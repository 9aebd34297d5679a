#include "trnslurm/export/export.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <system_error>
#include <utility>

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

namespace {

// The chain rendered for a container: each enabled stage's script, checked for srun options the
// entry points run, with its nodes, time and attempts.
struct Rendered {
  std::vector<std::pair<std::string, std::string>> scripts;  // stage, script
  std::vector<ExportStage> stages;                           // the figures both systems use
};

Result<Rendered> render_for_export(const Recipe& recipe, const json& plan_doc, const ExportRequest& request,
                                   const std::string& chain_id, const fs::path& run_dir,
                                   std::uint32_t max_attempts, const std::string& system,
                                   std::vector<std::string>& notes) {
  auto inputs = chain_inputs_from_recipe(recipe, plan_doc, chain_id, run_dir, request.site);
  if (!inputs) return std::unexpected(inputs.error());
  inputs->host = JobHost::container;
  auto chain = render_chain(*inputs);
  if (!chain) return std::unexpected(chain.error());
  Rendered out;
  for (const auto& stage : chain->stages) {
    const auto where = recipe.where(fmt::format("stages.{}", stage.name));
    if (auto ok = check_srun(stage.name, stage.script, where); !ok) return std::unexpected(ok.error());
    ExportStage s{stage.name, stage.nodes, 0, std::nullopt};
    if (!stage.time.empty()) {
      const auto seconds = slurm_time_seconds(stage.time);
      if (seconds) s.seconds = *seconds;  // UNLIMITED: no time limit
    }
    const auto src = std::ranges::find(inputs->stages, stage.name, &StageInput::name);
    if (src != inputs->stages.end() && src->resilience) {
      const auto wanted = src->resilience->max_restarts + 1;
      s.attempts = std::min(wanted, max_attempts);
      if (wanted > max_attempts)
        notes.push_back(fmt::format("stage {}: max_restarts = {} is more than {} retries: {} attempts",
                                    stage.name, src->resilience->max_restarts, system, max_attempts));
    }
    out.scripts.emplace_back(stage.name, stage.script);
    out.stages.push_back(std::move(s));
  }
  return out;
}

// The files of the AWS Batch export under aws-batch/.
Result<void> batch_files(Export& out, const Recipe& recipe, const InstanceType& type,
                         const ExportRequest& request, const Rendered& rendered) {
  const auto& opts = request.batch;
  if (opts.job_queue.empty())
    return fail("no job queue given", "--job-queue", "give the AWS Batch job queue: --job-queue NAME");
  if (!type.cpu() && !type.efa_devices.value)
    out.notes.push_back(
        fmt::format("the instance table does not know how many EFA interfaces {} has: the job "
                    "definitions map no /dev/infiniband/uverbs device and the nodes run without "
                    "EFA; add the devices by hand (launch-template.md)",
                    type.name));
  BatchOptions batch = opts;
  batch.mounts = shared_mounts(recipe, out.run_dir, opts.mounts);
  const std::string dir = "aws-batch";
  const auto entry_path = (out.run_dir / dir / "entry.sh").string();
  for (const auto& s : rendered.stages) {
    auto def = batch_job_definition(out.chain_id, s, type, batch, {"/bin/bash", entry_path, s.name});
    if (!def) return std::unexpected(def.error());
    out.files.push_back({fmt::format("{}/job-definitions/{}.json", dir, s.name), def->dump(2) + "\n", false});
    out.files.push_back({fmt::format("{}/submit-requests/{}.json", dir, s.name),
                         batch_submit_request(out.chain_id, s.name, batch).dump(2) + "\n", false});
  }
  out.files.push_back({dir + "/submit.sh", batch_submit_script(out.chain_id, rendered.stages), true});
  out.files.push_back({dir + "/launch-template.md", batch_launch_notes(type, batch), false});
  out.run_script = dir + "/submit.sh";
  return {};
}

// The files of the Kubernetes export under k8s/.
Result<void> k8s_files(Export& out, const Recipe& recipe, const InstanceType& type,
                       const ExportRequest& request, const Rendered& rendered) {
  auto claims = k8s_volume_claims(shared_mounts(recipe, out.run_dir, {}), request.k8s.claims);
  if (!claims) return std::unexpected(claims.error());
  if (!type.cpu() && !type.efa_devices.value)
    out.notes.push_back(
        fmt::format("the instance table does not know how many EFA interfaces {} has: the MPIJobs request no "
                    "{} and the pods run without EFA (unverified); add the resource by hand (k8s/README.md)",
                    type.name, "vpc.amazonaws.com/efa"));
  const std::string dir = "k8s";
  const auto entry_path = (out.run_dir / dir / "entry.sh").string();
  for (const auto& s : rendered.stages) {
    auto job = k8s_mpijob(out.chain_id, s, type, request.k8s, *claims, {"/bin/bash", entry_path, s.name});
    if (!job) return std::unexpected(job.error());
    out.files.push_back({fmt::format("{}/mpijobs/{}.json", dir, s.name), job->dump(2) + "\n", false});
  }
  out.files.push_back({dir + "/run.sh", k8s_run_script(out.chain_id, rendered.stages, request.k8s), true});
  out.files.push_back({dir + "/README.md", k8s_cluster_notes(type, request.k8s, *claims), false});
  out.run_script = dir + "/run.sh";
  return {};
}

}  // namespace

Result<Export> export_chain(const Recipe& recipe, const Plan& plan, const ExportRequest& request,
                            const std::string& chain_id) {
  const bool batch = request.target == ExportTarget::aws_batch;
  const auto& image = batch ? request.batch.image : request.k8s.image;
  if (image.empty())
    return fail("no container image given", "--image", "give the image every node runs: --image URI");
  const auto* type = recipe.instances.find(recipe.cluster.instance);
  if (type == nullptr)
    return fail(fmt::format("unknown instance type {}", recipe.cluster.instance),
                recipe.where("cluster.instance"));
  const fs::path run_dir = request.runs_dir / chain_id;
  const auto plan_doc = to_json(plan);
  Export out{chain_id, run_dir, {}, {}, {}, {}};
  // AWS Batch: at most 10 attempts (RetryStrategy); a Job's backoffLimit has no such bound.
  auto rendered = render_for_export(recipe, plan_doc, request, chain_id, run_dir,
                                    batch ? batch_max_attempts : std::numeric_limits<std::uint32_t>::max(),
                                    batch ? "AWS Batch" : "Kubernetes", out.notes);
  if (!rendered) return std::unexpected(rendered.error());
  auto env = task_env_script(*type, EnvSettings{});
  if (!env) return std::unexpected(env.error());
  const auto entry = export_text(batch ? "batch_entry" : "k8s_entry");
  const auto steps = export_text("node_steps");
  if (entry.empty() || steps.empty()) return fail("the entry point is not compiled in", "trnslurm build");
  auto files = batch ? batch_files(out, recipe, *type, request, *rendered)
                     : k8s_files(out, recipe, *type, request, *rendered);
  if (!files) return std::unexpected(files.error());
  const std::string dir = batch ? "aws-batch" : "k8s";
  for (const auto& [name, script] : rendered->scripts) {
    out.files.push_back({fmt::format("{}/stages/{}.sh", dir, name), script, true});
    out.stages.push_back(name);
  }
  out.files.push_back({dir + "/entry.sh", std::string(entry), true});
  out.files.push_back({dir + "/node-steps.sh", std::string(steps), false});
  out.files.push_back({dir + "/task-env.sh", std::move(*env), false});
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
