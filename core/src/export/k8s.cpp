#include "trnslurm/export/k8s.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace trnslurm {
namespace {

using nlohmann::json;

// The resources the device plugins advertise: the Neuron device plugin's whole devices and the
// EFA device plugin's interfaces (docs/export.md).
constexpr const char* neuron_resource = "aws.amazon.com/neuron";
constexpr const char* efa_resource = "vpc.amazonaws.com/efa";

// A DNS-1035 label (Kubernetes' IsDNS1035Label): what a pod's host name and the MPIJob's name
// must be.
bool dns1035_label(const std::string& s) {
  if (s.empty() || s.size() > 63 || std::islower(static_cast<unsigned char>(s.front())) == 0 ||
      s.back() == '-')
    return false;
  return std::ranges::all_of(s, [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 ||
           std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
}

// A DNS-1123 label (a namespace): as above, but it may start with a digit.
bool dns1123_label(const std::string& s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s.front())) != 0
             ? dns1035_label("a" + s.substr(1))
             : dns1035_label(s);
}

// A DNS-1123 subdomain (a claim's name): labels of the above joined by '.', at most 253.
bool dns1123_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (std::size_t at = 0; at <= s.size();) {
    const auto dot = std::min(s.find('.', at), s.size());
    if (!dns1123_label(s.substr(at, dot - at))) return false;
    at = dot + 1;
  }
  return true;
}

json pod_template(const std::string& chain_id, const std::string& stage, const std::string& role,
                  const InstanceType& type, const K8sOptions& options,
                  const std::vector<std::pair<std::string, std::string>>& claims,
                  const std::vector<std::string>& command) {
  json limits = json::object();
  if (!type.cpu()) {
    limits[neuron_resource] = std::to_string(type.devices.value.value_or(0));
    if (type.efa_devices.value && *type.efa_devices.value > 0)
      limits[efa_resource] = std::to_string(*type.efa_devices.value);
  }
  auto mounts = json::array();
  auto volumes = json::array();
  for (std::size_t k = 0; k < claims.size(); ++k) {
    const auto name = fmt::format("shared{}", k);
    mounts.push_back({{"name", name}, {"mountPath", claims[k].first}});
    volumes.push_back({{"name", name}, {"persistentVolumeClaim", {{"claimName", claims[k].second}}}});
  }
  // /dev/shm in memory, half the host's memory as Linux gives it on a host by default.
  json shm{{"medium", "Memory"}};
  if (type.host_memory_gib.value)
    shm["sizeLimit"] =
        fmt::format("{}Mi", static_cast<std::uint64_t>(*type.host_memory_gib.value * 1024 / 2));
  mounts.push_back({{"name", "dshm"}, {"mountPath", "/dev/shm"}});
  volumes.push_back({{"name", "dshm"}, {"emptyDir", shm}});
  // The launcher's attempt: entry.sh names its steps after the pod's uid, and a failure of the
  // stage's own after the launcher's Job (the label the Job controller gives its pods).
  auto env = json::array(
      {{{"name", "TRN_POD_UID"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}}});
  if (role == "launcher")
    env.push_back(
        {{"name", "TRN_LAUNCHER_JOB_UID"},
         {"valueFrom",
          {{"fieldRef", {{"fieldPath", "metadata.labels['batch.kubernetes.io/controller-uid']"}}}}}});
  json container{
      {"name", "trainer"},
      {"image", options.image},
      {"command", command},
      {"env", env},
      // Kubernetes sets no memlock limit: IPC_LOCK lets EFA and the Neuron runtime lock memory
      // whatever RLIMIT_MEMLOCK the node's container runtime gives.
      {"securityContext", {{"capabilities", {{"add", json::array({"IPC_LOCK"})}}}}},
      {"volumeMounts", mounts},
  };
  if (!limits.empty()) container["resources"] = {{"limits", limits}, {"requests", limits}};
  json spec{{"containers", json::array({container})}, {"volumes", volumes}};
  if (!type.cpu()) spec["nodeSelector"] = {{"node.kubernetes.io/instance-type", type.name}};
  return json{
      {"metadata",
       {{"labels", {{"trnslurm-chain", chain_id}, {"trnslurm-stage", stage}, {"trnslurm-role", role}}}}},
      {"spec", spec}};
}

}  // namespace

std::string k8s_job_name(const std::string& chain_id, const std::string& stage) {
  auto name = fmt::format("trn-{}-{}", chain_id, stage);
  std::ranges::transform(name, name.begin(), [](char c) {
    return c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return name;
}

Result<std::vector<std::pair<std::string, std::string>>> k8s_volume_claims(
    const std::vector<std::string>& shared, const std::vector<std::string>& claims) {
  std::vector<std::pair<std::string, std::string>> named;
  std::string bare;
  for (const auto& c : claims) {
    const auto eq = c.find('=');
    const auto dir = eq == std::string::npos ? std::string() : c.substr(0, eq);
    const auto claim = eq == std::string::npos ? c : c.substr(eq + 1);
    if (!dns1123_subdomain(claim))
      return fail(
          fmt::format("'{}' is not a volume claim name (lower-case letters, digits, '-' and '.')", claim),
          "--volume-claim", "give [DIR=]CLAIM");
    if (eq == std::string::npos) {
      if (!bare.empty())
        return fail("more than one --volume-claim without a directory", "--volume-claim",
                    "give the others as DIR=CLAIM");
      bare = claim;
      continue;
    }
    if (dir.empty() || dir.front() != '/')
      return fail(fmt::format("'{}' is not an absolute directory", dir), "--volume-claim", "give /DIR=CLAIM");
    named.emplace_back(dir, claim);
  }
  std::vector<std::pair<std::string, std::string>> out = named;
  std::vector<std::string> unclaimed;
  for (const auto& dir : shared)
    if (std::ranges::find(named, dir, &std::pair<std::string, std::string>::first) == named.end())
      unclaimed.push_back(dir);
  if (unclaimed.empty()) return out;
  if (bare.empty())
    return fail(fmt::format("no volume claim for {}, which every pod must see", fmt::join(unclaimed, ", ")),
                "--volume-claim", fmt::format("give --volume-claim {}=CLAIM", unclaimed.front()));
  if (unclaimed.size() > 1)
    return fail(fmt::format("one claim ({}) for {} directories ({}): each would show the claim's root", bare,
                            unclaimed.size(), fmt::join(unclaimed, ", ")),
                "--volume-claim", "give each directory its claim: --volume-claim DIR=CLAIM");
  out.emplace_back(unclaimed.front(), bare);
  return out;
}

Result<json> k8s_mpijob(const std::string& chain_id, const ExportStage& stage, const InstanceType& type,
                        const K8sOptions& options,
                        const std::vector<std::pair<std::string, std::string>>& claims,
                        const std::vector<std::string>& command) {
  const auto where = fmt::format("stages.{}", stage.name);
  const auto name = k8s_job_name(chain_id, stage.name);
  // The operator's check (validation.go, validateMPIJobName): the last worker's host name.
  const auto workers = stage.nodes > 1 ? stage.nodes - 1 : 0;
  for (const auto& host :
       {fmt::format("{}-worker-{}", name, workers > 0 ? workers - 1 : 0), name + "-launcher"})
    if (!dns1035_label(host))
      return fail(
          fmt::format("the MPIJob {}'s pod host name {} is not a DNS-1035 label (at most 63 characters)",
                      name, host),
          where, "give the stage fewer nodes or a shorter chain id");
  if (!dns1123_label(options.name_space))
    return fail(fmt::format("'{}' is not a namespace name (a DNS-1123 label)", options.name_space),
                "--namespace");
  if (!type.cpu() && !type.devices.value)
    return fail(fmt::format("the instance table has no device count for {}", type.name), where);
  json run_policy{{"cleanPodPolicy", "Running"}, {"backoffLimit", stage.attempts ? *stage.attempts - 1 : 0}};
  if (stage.seconds != 0) run_policy["activeDeadlineSeconds"] = stage.seconds;
  json replicas{
      {"Launcher",
       {{"replicas", 1},
        {"restartPolicy", "Never"},
        {"template", pod_template(chain_id, stage.name, "launcher", type, options, claims, command)}}}};
  if (workers > 0)
    replicas["Worker"] = {
        {"replicas", workers},
        {"restartPolicy", "OnFailure"},
        {"template", pod_template(chain_id, stage.name, "worker", type, options, claims, command)}};
  return json{{"apiVersion", "kubeflow.org/v2beta1"},
              {"kind", "MPIJob"},
              {"metadata",
               {{"name", name},
                {"namespace", options.name_space},
                {"labels", {{"trnslurm-chain", chain_id}, {"trnslurm-stage", stage.name}}}}},
              {"spec",
               {{"slotsPerWorker", 1},
                {"runLauncherAsWorker", true},
                {"launcherCreationPolicy", "WaitForWorkersReady"},
                {"mpiImplementation", "OpenMPI"},
                {"sshAuthMountPath", "/root/.ssh"},
                {"runPolicy", run_policy},
                {"mpiReplicaSpecs", replicas}}}};
}

std::string k8s_run_script(const std::string& chain_id, const std::vector<ExportStage>& stages,
                           const K8sOptions& options) {
  std::string list;
  for (const auto& s : stages) list += fmt::format(" {}:{}", s.name, k8s_job_name(chain_id, s.name));
  return fmt::format(
      R"sh(#!/bin/bash
# Applies the MPIJob of each stage of trnslurm chain {0} in order, each once the one before has
# succeeded, as `trnslurm submit` chains sbatch --dependency=afterok. Written by `trnslurm export
# --to k8s` (docs/export.md). Needs kubectl (KUBECTL=... names another) with a context on the
# cluster. Each applied stage goes to applied as it is applied; a failed stage stops the chain
# (exit 1) and leaves its MPIJob for `kubectl describe`. Run again, it applies what exists already
# unchanged and goes on where it stopped.
set -euo pipefail
here=$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)
kubectl=${{KUBECTL:-kubectl}}
ns={1}
wait_step=${{TRNSLURM_K8S_WAIT:-60s}}
for pair in{2}; do
  stage=${{pair%%:*}} name=${{pair#*:}}
  "$kubectl" apply -f "$here/mpijobs/$stage.json"
  echo "$stage $name" >>"$here/applied"
  echo "$stage: MPIJob $name applied, waiting for it to succeed"
  until "$kubectl" wait -n "$ns" --for=condition=Succeeded --timeout="$wait_step" "mpijob/$name" >/dev/null; do
    failed=$("$kubectl" get -n "$ns" "mpijob/$name" -o 'jsonpath={{.status.conditions[?(@.type=="Failed")].status}}')
    if [ "$failed" = True ]; then
      echo "$stage: MPIJob $name failed: the chain stops here (kubectl describe -n $ns mpijob/$name)" >&2
      exit 1
    fi
  done
  echo "$stage: succeeded"
done
)sh",
      chain_id, options.name_space, list);
}

std::string k8s_cluster_notes(const InstanceType& type, const K8sOptions& options,
                              const std::vector<std::pair<std::string, std::string>>& claims) {
  std::string mounts;
  for (const auto& [dir, claim] : claims) mounts += fmt::format("  - `{}` mounted at `{}`\n", claim, dir);
  const auto efa = type.efa_devices.value;
  return fmt::format(
      "# What the cluster needs (trnslurm export, docs/export.md)\n\n"
      "trnslurm writes the MPIJobs, not the cluster. In namespace `{0}`, before `run.sh`:\n\n"
      "- **Nodes**: {1}.\n"
      "- **The Neuron device plugin**, which advertises `aws.amazon.com/neuron` ({2} per node here).\n"
      "- **The EFA device plugin**, which advertises `vpc.amazonaws.com/efa`: {3}.\n"
      "- **The Kubeflow MPI Operator** (v0.8.2 is what the MPIJobs were checked against; it must\n"
      "  know `runLauncherAsWorker` and `launcherCreationPolicy`, v0.5.0 and later).\n"
      "- **The persistent volume claims**, read-write by many pods (FSx for Lustre's CSI driver):\n"
      "{4}",
      options.name_space,
      type.cpu() ? std::string("any (a cpu recipe: no instance type selected)")
                 : fmt::format("of type `{}` (the MPIJobs select `node.kubernetes.io/instance-type`), in one "
                               "placement group, on an AMI with the Neuron and EFA drivers",
                               type.name),
      type.cpu() ? std::string("none: a cpu type") : std::to_string(type.devices.value.value_or(0)),
      type.cpu() ? std::string("none requested: a cpu type")
      : efa      ? fmt::format("{} per node (instance table, source `{}`)", *efa, type.efa_devices.source)
                 : std::string("NOT requested: the instance table does not know this type's EFA interfaces "
                                    "(unverified); add the resource to the MPIJobs by hand"),
      mounts);
}

}  // namespace trnslurm
