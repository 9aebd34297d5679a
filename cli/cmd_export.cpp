// `trnslurm export`: the chain `submit` would queue, written for AWS Batch or for Kubernetes with
// the MPI Operator (docs/export.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

#include "commands.hpp"
#include "install_paths.hpp"
#include "output.hpp"
#include "recipe_options.hpp"
#include "trnslurm/chain/chain.hpp"
#include "trnslurm/export/export.hpp"

namespace trnslurm::cli {
namespace {
namespace fs = std::filesystem;

struct Options {
  RecipeOptions recipe;
  DatasetOptions dataset;
  std::string to;
  std::string runs_dir;
  std::string image;
  std::string job_queue;
  std::string name_space = "default";
  std::vector<std::string> claims;
  std::vector<std::string> mounts;
  std::optional<std::uint32_t> vcpus;
  std::optional<std::uint32_t> memory_mib;
  bool json = false;
};

int run(const Options& args) {
  const auto planned = load_and_plan(args.recipe, args.dataset);
  if (!planned) {
    return exit_with(planned.error(), ErrorKind::input);
  }
  for (const auto& w : planned->plan.warnings) print_warning(w);
  const bool k8s = args.to == "k8s";
  if (!k8s && (!args.claims.empty() || args.name_space != "default"))
    return exit_with(Error{"--volume-claim and --namespace are for --to k8s", "--to aws-batch", ""},
                     ErrorKind::usage);
  if (k8s && (!args.job_queue.empty() || !args.mounts.empty() || args.vcpus || args.memory_mib))
    return exit_with(Error{"--job-queue, --mount, --vcpus and --memory-mib are for --to aws-batch",
                           "--to k8s", "give the shared directories as --volume-claim DIR=CLAIM"},
                     ErrorKind::usage);
  ExportRequest request{
      .target = k8s ? ExportTarget::k8s : ExportTarget::aws_batch,
      .runs_dir =
          args.runs_dir.empty() ? fs::path(planned->recipe.run.runs_dir) : fs::absolute(args.runs_dir),
      .batch = BatchOptions{args.image, args.job_queue, args.mounts, args.vcpus, args.memory_mib},
      .k8s = K8sOptions{args.image, args.name_space, args.claims},
      .site = {{"backend_dir", backend_dir().string()}, {"trnslurm_bin", self_exe().string()}},
  };
  const auto id = make_chain_id(std::chrono::system_clock::now(), ::arc4random());
  auto exported = export_chain(planned->recipe, planned->plan, request, id);
  if (!exported) {
    return exit_with(exported.error(), ErrorKind::input);
  }
  if (auto w = write_export(*exported); !w) {
    return exit_with(w.error(), ErrorKind::local);
  }
  for (const auto& note : exported->notes) print_warning(note);
  if (args.json) {
    auto files = nlohmann::json::array();
    for (const auto& f : exported->files) files.push_back((exported->run_dir / f.path).string());
    const nlohmann::json j{{"chain_id", exported->chain_id},
                           {"to", args.to},
                           {"run_dir", exported->run_dir.string()},
                           {"stages", exported->stages},
                           {"submit", (exported->run_dir / exported->run_script).string()},
                           {"files", files},
                           {"notes", exported->notes}};
    fmt::print("{}\n", j.dump(2));
    return exit_ok;
  }
  std::string out = fmt::format("chain {} exported for {}\nrun directory {}\n", exported->chain_id, args.to,
                                exported->run_dir.string());
  for (const auto& f : exported->files) out += fmt::format("  {}\n", f.path);
  out += fmt::format("submit with: {}\n", (exported->run_dir / exported->run_script).string());
  fmt::print("{}", out);
  return exit_ok;
}

}  // namespace

Command add_export(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("export", "Write the recipe's chain for another scheduler (AWS Batch, Kubernetes)");
  add_recipe_options(*sub, opts->recipe);
  add_dataset_options(*sub, opts->dataset);
  sub->add_option("--to", opts->to, "The scheduler: aws-batch, or k8s (the Kubeflow MPI Operator's MPIJob)")
      ->required()
      ->type_name("SYSTEM")
      ->check(CLI::IsMember({"aws-batch", "k8s"}));
  sub->add_option("--image", opts->image, "The container image every node runs (required)")->type_name("URI");
  sub->add_option("--job-queue", opts->job_queue, "The AWS Batch job queue (required for aws-batch)")
      ->type_name("NAME");
  sub->add_option("--namespace", opts->name_space, "k8s: the MPIJobs' namespace (default: default)")
      ->type_name("NAME");
  sub->add_option("--volume-claim", opts->claims,
                  "k8s: the persistent volume claim mounted at DIR, one of the directories every pod must "
                  "see (repeatable); a bare CLAIM serves the one directory no other names")
      ->type_name("[DIR=]CLAIM")
      ->allow_extra_args(false);
  sub->add_option("--mount", opts->mounts,
                  "aws-batch: a host directory every node mounts at the same path (repeatable; the "
                  "recipe's top directories are mounted already)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  sub->add_option("--vcpus", opts->vcpus, "aws-batch: vCPUs per node (default: the instance type's)")
      ->type_name("N");
  sub->add_option("--memory-mib", opts->memory_mib,
                  "aws-batch: memory per node in MiB (default: 95 % of the type's)")
      ->type_name("N");
  sub->add_option("--runs-dir", opts->runs_dir,
                  "Where to create the run directory (default: the recipe's run.runs_dir)");
  sub->add_flag("--json", opts->json, "Print the chain id, run directory and the files written as JSON");
  sub->footer(
      "Exit codes: 0 written, 1 the run directory could not be written (nothing was left), 2 bad\n"
      "recipe or option. Nothing is submitted: run the script it names (aws-batch/submit.sh, k8s/run.sh).\n"
      "Examples:\n"
      "  trnslurm export --to aws-batch --image 123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer:2.33 "
      "\\\n"
      "      --job-queue trn2-queue\n"
      "  trnslurm export --to aws-batch --image IMAGE --job-queue Q --mount /home --json\n"
      "  trnslurm export --to k8s --image IMAGE --namespace training --volume-claim fsx-claim");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
