#include "trnslurm/export/aws_batch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace trnslurm {
namespace {

using nlohmann::json;

// "/fsx" -> "fsx", "/" -> "root": a volume's name, letters, digits, '-' and '_'.
std::string volume_name(std::size_t k, const std::string& path) {
  std::string name;
  for (char c : path)
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') name += c;
  return fmt::format("shared{}-{}", k, name.empty() ? std::string("root") : name.substr(0, 200));
}

}  // namespace

std::string batch_job_name(const std::string& chain_id, const std::string& stage) {
  return fmt::format("trn-{}-{}", chain_id, stage);
}

Result<json> batch_job_definition(const std::string& chain_id, const ExportStage& stage,
                                  const InstanceType& type, const BatchOptions& options,
                                  const std::vector<std::string>& command) {
  const auto where = fmt::format("stages.{}", stage.name);
  const auto vcpus = options.vcpus ? options.vcpus : type.vcpus.value;
  if (!vcpus || *vcpus == 0)
    return fail(fmt::format("the instance table has no vCPU count for {}", type.name), where,
                "give --vcpus N");
  std::optional<std::uint64_t> memory = options.memory_mib;
  if (!memory && type.host_memory_gib.value)
    memory = static_cast<std::uint64_t>(*type.host_memory_gib.value * 1024 * 0.95);
  if (!memory || *memory == 0)
    return fail(fmt::format("the instance table has no host memory for {}", type.name), where,
                "give --memory-mib N");
  if (stage.seconds != 0 && stage.seconds < batch_min_timeout)
    return fail(fmt::format("stage {} has a time limit of {} s; AWS Batch's timeout is at least {} s",
                            stage.name, stage.seconds, batch_min_timeout),
                where + ".time", "set a time of a minute or more");
  auto devices = json::array();
  const auto neuron = type.cpu() ? 0U : type.devices.value.value_or(0);
  for (std::uint32_t i = 0; i < neuron; ++i) {
    const auto path = fmt::format("/dev/neuron{}", i);
    devices.push_back({{"hostPath", path}, {"containerPath", path}});
  }
  const auto efa = type.cpu() ? 0U : type.efa_devices.value.value_or(0);
  for (std::uint32_t i = 0; i < efa; ++i) {
    const auto path = fmt::format("/dev/infiniband/uverbs{}", i);
    devices.push_back({{"hostPath", path}, {"containerPath", path}});
  }
  json linux_params{{"sharedMemorySize", static_cast<std::int64_t>(*memory / 2)}};
  if (!devices.empty()) linux_params["devices"] = devices;
  auto volumes = json::array();
  auto mount_points = json::array();
  for (std::size_t k = 0; k < options.mounts.size(); ++k) {
    const auto name = volume_name(k, options.mounts[k]);
    volumes.push_back({{"name", name}, {"host", {{"sourcePath", options.mounts[k]}}}});
    mount_points.push_back(
        {{"sourceVolume", name}, {"containerPath", options.mounts[k]}, {"readOnly", false}});
  }
  json container{
      {"image", options.image},
      {"command", command},
      {"instanceType", type.name},
      {"resourceRequirements", json::array({{{"type", "VCPU"}, {"value", std::to_string(*vcpus)}},
                                            {{"type", "MEMORY"}, {"value", std::to_string(*memory)}}})},
      {"linuxParameters", linux_params},
      {"ulimits", json::array({{{"name", "memlock"}, {"softLimit", -1}, {"hardLimit", -1}}})},
      {"volumes", volumes},
      {"mountPoints", mount_points},
  };
  json def{{"jobDefinitionName", batch_job_name(chain_id, stage.name)},
           {"type", "multinode"},
           {"platformCapabilities", json::array({"EC2"})},
           {"nodeProperties",
            {{"numNodes", stage.nodes},
             {"mainNode", 0},
             {"nodeRangeProperties", json::array({{{"targetNodes", "0:"}, {"container", container}}})}}},
           {"tags", {{"trnslurm-chain", chain_id}, {"trnslurm-stage", stage.name}}}};
  if (stage.seconds != 0) def["timeout"] = {{"attemptDurationSeconds", stage.seconds}};
  if (stage.attempts) {
    // A lost node: the entry point's exit 75 (a child) or no exit code at all (the main node's
    // instance, which no rule matches: Batch retries it). Any other exit is the command's own.
    def["retryStrategy"] = {
        {"attempts", std::clamp<std::uint32_t>(*stage.attempts, 1, batch_max_attempts)},
        {"evaluateOnExit", json::array({{{"onExitCode", std::to_string(node_lost_exit)}, {"action", "RETRY"}},
                                        {{"onExitCode", "*"}, {"action", "EXIT"}}})}};
  }
  return def;
}

json batch_submit_request(const std::string& chain_id, const std::string& stage,
                          const BatchOptions& options) {
  const auto name = batch_job_name(chain_id, stage);
  return json{{"jobName", name},
              {"jobQueue", options.job_queue},
              {"jobDefinition", name},
              {"tags", {{"trnslurm-chain", chain_id}, {"trnslurm-stage", stage}}}};
}

std::string batch_submit_script(const std::string& chain_id, const std::vector<ExportStage>& stages) {
  std::vector<std::string> names;
  names.reserve(stages.size());
  for (const auto& s : stages) names.push_back(s.name);
  return fmt::format(
      R"sh(#!/bin/bash
# Registers the job definitions of trnslurm chain {0} and submits its stages to AWS Batch, each
# depending on the one before (dependsOn), as `trnslurm submit` chains sbatch --dependency=afterok.
# Written by `trnslurm export --to aws-batch` (docs/export.md). Needs the aws CLI (AWS=... names
# another) with credentials for the job queue's account. Each job id goes to job-ids as it comes;
# should a submission fail, the stages already submitted are terminated.
set -euo pipefail
here=$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)
aws=${{AWS:-aws}}
submitted=()
undo() {{
  local id
  for id in "${{submitted[@]}}"; do
    "$aws" batch terminate-job --job-id "$id" --reason "trnslurm: chain {0} not submitted whole" || true
  done
}}
trap 'undo' ERR
: >"$here/job-ids"
prev=
for stage in {1}; do
  def=$("$aws" batch register-job-definition --cli-input-json "file://$here/job-definitions/$stage.json" \
    --query jobDefinitionArn --output text)
  args=(batch submit-job --cli-input-json "file://$here/submit-requests/$stage.json" --job-definition "$def"
    --query jobId --output text)
  if [ -n "$prev" ]; then args+=(--depends-on "jobId=$prev"); fi
  prev=$("$aws" "${{args[@]}}")
  submitted+=("$prev")
  echo "$stage $prev" >>"$here/job-ids"
  echo "$stage: job $prev"
done
)sh",
      chain_id, fmt::join(names, " "));
}

std::string batch_launch_notes(const InstanceType& type, const BatchOptions& options) {
  const auto efa = type.efa_devices.value;
  return fmt::format(
      "# What the compute environment needs (trnslurm export, docs/export.md)\n\n"
      "The job definitions run on `{0}` instances. trnslurm does not create the compute environment,\n"
      "its launch template or the job queue: create them once, as below.\n\n"
      "- **EFA interfaces:** {1} per instance (instance table, source `{2}`): the launch template's\n"
      "  network interfaces, each `InterfaceType: efa`, one per network card. The job definitions\n"
      "  map one `/dev/infiniband/uverbs<N>` device per interface into the container.\n"
      "- **Placement group:** a `cluster` placement group in the compute environment, so the nodes of\n"
      "  a job share one network spine.\n"
      "- **Shared file system:** mounted on the host at {3} before the ECS agent starts (launch\n"
      "  template user data); Batch has no FSx volume type, so the job definitions mount the host's\n"
      "  directory (`volumes` with `host.sourcePath`, `mountPoints` at the same path).\n"
      "- **Neuron driver:** on the host (an AMI with the Neuron driver and the EFA driver); the\n"
      "  container image carries the Neuron runtime and the trainer.\n",
      type.name, efa ? std::to_string(*efa) : std::string("unknown"),
      type.efa_devices.source.empty() ? std::string("none") : type.efa_devices.source,
      options.mounts.empty() ? std::string("(no mount given)")
                             : fmt::format("{}", fmt::join(options.mounts, ", ")));
}

}  // namespace trnslurm
