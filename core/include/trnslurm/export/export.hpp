#pragma once
// `trnslurm export` (docs/export.md): the chain `submit` would queue, handed to another scheduler.
// The same recipe, plan and rendered stage commands (chain/chain_recipe.hpp, chain_render.hpp,
// rendered for a container instead of a Slurm batch job) and the same task-environment decision
// the plugin takes on each node (task_env_script.hpp); the files each system needs, written into
// a new run directory at once or not at all.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/export/aws_batch.hpp"
#include "trnslurm/export/k8s.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

enum class ExportTarget { aws_batch, k8s };

struct ExportRequest {
  ExportTarget target = ExportTarget::aws_batch;
  std::filesystem::path runs_dir;  // absolute: the run directory is created under it
  BatchOptions batch;              // mounts: the recipe's top directories are added (shared_mounts)
  K8sOptions k8s;                  // claims: one for each of the recipe's top directories
  TemplateValues site;             // backend_dir, trnslurm_bin: where this installation is
};

// One file of the export, by its path under the run directory.
struct ExportFile {
  std::string path;
  std::string text;
  bool executable = false;
};

struct Export {
  std::string chain_id;
  std::filesystem::path run_dir;
  std::vector<std::string> stages;  // in order
  std::vector<ExportFile> files;
  std::vector<std::string> notes;  // what differs from what the recipe asks, said once
  std::string run_script;          // the file that submits the chain, under the run directory
};

// The files of `request.target` for the recipe's enabled stages under the chain id `chain_id`.
// Refuses what the other system cannot run: an srun option other than one task per node
// (exported_srun_options), a time limit the system refuses, an instance type without the figures
// a job definition needs, a missing image, queue or volume claim.
Result<Export> export_chain(const Recipe& recipe, const Plan& plan, const ExportRequest& request,
                            const std::string& chain_id);

// The directories every node must see at the same path: the top directory of each absolute path
// the chain reads or writes (run directory, checkpoints, dataset, upstream checkout), then `extra`.
std::vector<std::string> shared_mounts(const Recipe& recipe, const std::filesystem::path& run_dir,
                                       const std::vector<std::string>& extra);

// Writes every file under a temporary directory beside the run directory and renames it into
// place: a failure leaves nothing, and an existing run directory is never touched.
Result<void> write_export(const Export& exported);

}  // namespace trnslurm
