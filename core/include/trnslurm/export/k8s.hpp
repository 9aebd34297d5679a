#pragma once
// Kubernetes with the Kubeflow MPI Operator as the scheduler of an exported chain
// (docs/export.md): one MPIJob (kubeflow.org/v2beta1) per stage and the script that applies each
// once the one before succeeded.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/export/stage.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// What the Kubernetes side needs that a recipe does not say.
struct K8sOptions {
  std::string image;                   // the container image every pod runs
  std::string name_space = "default";  // the namespace of the MPIJobs
  // The persistent volume claim mounted at each directory every pod must see (shared_mounts):
  // "DIR=CLAIM" for one directory, a bare "CLAIM" for the one directory no other names.
  std::vector<std::string> claims;
};

// The MPIJob name of a stage: trn-<chain>-<stage>, '_' as '-' (a DNS-1035 label).
std::string k8s_job_name(const std::string& chain_id, const std::string& stage);

// Each shared directory with its claim, from `claims` ([DIR=]CLAIM). Refuses a directory
// without a claim, a bare claim when more than one directory has none, a malformed entry.
Result<std::vector<std::pair<std::string, std::string>>> k8s_volume_claims(
    const std::vector<std::string>& shared, const std::vector<std::string>& claims);

// The stage's MPIJob: the launcher runs as worker 0 (runLauncherAsWorker) and the workers are
// the other nodes, each pod with the type's Neuron devices and EFA interfaces as resources, the
// claims mounted, /dev/shm in memory, `command`; the stage time as activeDeadlineSeconds and the
// attempts as the launcher's backoffLimit. Refuses a name the operator would refuse (a pod
// host name that is not a DNS-1035 label).
Result<nlohmann::json> k8s_mpijob(const std::string& chain_id, const ExportStage& stage,
                                  const InstanceType& type, const K8sOptions& options,
                                  const std::vector<std::pair<std::string, std::string>>& claims,
                                  const std::vector<std::string>& command);

// run.sh: applies each stage's MPIJob in order once the one before succeeded (kubectl wait);
// stops at a failed stage. Run again, it applies nothing twice and goes on where it stopped.
std::string k8s_run_script(const std::string& chain_id, const std::vector<ExportStage>& stages,
                           const K8sOptions& options);

// README.md: what the cluster must provide (device plugins, the operator, the claims).
std::string k8s_cluster_notes(const InstanceType& type, const K8sOptions& options,
                              const std::vector<std::pair<std::string, std::string>>& claims);

}  // namespace trnslurm
