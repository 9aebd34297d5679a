#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// What the plan needs to know about an instance type (docs/plan.md, trainium-facts.md §1).
struct InstanceSpec {
  std::string_view name;
  std::string_view backend;               // "trn1", "trn2" (convert_checkpoints --hw_backend), "cpu"
  std::uint32_t physical_cores = 0;       // NeuronCores per node at LNC=1 (0 for cpu)
  std::uint64_t device_memory_gib = 0;    // HBM per node (0 for cpu: no device memory check)
  std::vector<std::uint32_t> lnc_values;  // accepted logical NeuronCore configs
  std::uint32_t default_lnc = 1;
};

// The instance types a recipe may name: trn1.32xlarge, trn1n.32xlarge, trn2.48xlarge, cpu.
const std::vector<InstanceSpec>& known_instances();
const InstanceSpec* find_instance(std::string_view name);

// Cores (workers) per node for an instance at a logical NeuronCore config: physical / lnc.
// `cpu` has no fixed count: the recipe gives it (`explicit_cores`).
Result<std::uint32_t> cores_per_node(const InstanceSpec& instance, std::uint32_t lnc,
                                     std::optional<std::uint32_t> explicit_cores);

// What a recipe's [cluster] names, resolved: the instance, its lnc (the instance's default for
// 0) and cores per node. Errors name the key at fault in Error::where ("cluster.instance",
// "cluster.lnc", "cluster.cores_per_node"), which the caller turns into a file position.
struct InstanceChoice {
  const InstanceSpec* spec = nullptr;
  std::uint32_t lnc = 0;
  std::uint32_t cores_per_node = 0;
};
Result<InstanceChoice> choose_instance(std::string_view name, std::uint32_t lnc,
                                       std::optional<std::uint32_t> explicit_cores);

// Device memory per (logical) core in bytes: HBM per node / cores per node.
std::uint64_t memory_per_core_bytes(const InstanceSpec& instance, std::uint32_t lnc);

}  // namespace trnslurm
