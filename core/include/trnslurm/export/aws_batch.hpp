#pragma once
// AWS Batch as the scheduler of an exported chain (docs/export.md): one multi-node parallel job
// definition per stage, its submission request, the script that registers and submits them
// chained by dependsOn, and what the compute environment's launch template needs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/export/stage.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// What the Batch side needs that a recipe does not say.
struct BatchOptions {
  std::string image;  // the container image every node runs: the trainer's venv, bash, the aws CLI not needed
  std::string job_queue;               // the job queue the stages are submitted to
  std::vector<std::string> mounts;     // host directories (the shared file system), mounted at the same path
  std::optional<std::uint32_t> vcpus;  // default: the instance type's
  std::optional<std::uint32_t> memory_mib;  // default: 95 % of the type's host memory
};

// The exit status by which the entry point says a node was lost (scripts/batch_entry.sh): retried.
inline constexpr int node_lost_exit = 75;

// The documented limits ParamValidator does not check (AWS Batch API reference: RetryStrategy,
// JobTimeout, SubmitJob dependsOn, NodeProperties).
inline constexpr std::uint32_t batch_max_attempts = 10;
inline constexpr std::uint64_t batch_min_timeout = 60;

// The job name and definition name of a stage: trn-<chain>-<stage>.
std::string batch_job_name(const std::string& chain_id, const std::string& stage);

// RegisterJobDefinition's request for one stage: type multinode, nodes 0: (numNodes may be
// overridden at submission), the instance type's Neuron devices and one uverbs device per EFA
// interface, memlock unlimited, shared memory, the mounts, `command`, the time limit as timeout,
// and for a stage with attempts the retry strategy. Refuses what Batch would (a time limit under
// 60 s) and an instance type without the figures it needs.
Result<nlohmann::json> batch_job_definition(const std::string& chain_id, const ExportStage& stage,
                                            const InstanceType& type, const BatchOptions& options,
                                            const std::vector<std::string>& command);

// SubmitJob's request for one stage, without dependsOn (the submit script adds the job before).
nlohmann::json batch_submit_request(const std::string& chain_id, const std::string& stage,
                                    const BatchOptions& options);

// submit.sh: registers each definition, submits each stage depending on the one before, records
// the job ids, and terminates what it submitted when a later submission fails.
std::string batch_submit_script(const std::string& chain_id, const std::vector<ExportStage>& stages);

// launch-template.md: what the compute environment's instances need (EFA interfaces of the type,
// a cluster placement group, the shared file system mounted on the host).
std::string batch_launch_notes(const InstanceType& type, const BatchOptions& options);

}  // namespace trnslurm
