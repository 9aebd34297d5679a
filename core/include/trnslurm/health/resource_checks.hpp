#pragma once
// What training needs of the node besides its devices: enough open files for the Neuron runtime,
// room for one checkpoint, a compile cache it can write (docs/health.md).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "trnslurm/health/finding.hpp"

namespace trnslurm::health {

// The open-files limit the launchers of NxD ask for (`ulimit -n 65535` in the training scripts
// of neuronx-distributed 2.29, e.g. tp_zero1_llama3_8B_hf_pretrain.sh).
inline constexpr std::uint64_t needed_open_files = 65535;

// Check "nofile": a hard limit below what is needed is a FAIL (no launcher can raise it) on a node
// with Neuron devices, a warn elsewhere (no runtime will need it); a soft one below it a warn
// (the launchers raise it themselves).
std::vector<Finding> check_open_files(std::uint64_t soft, std::uint64_t hard, bool neuron_node);

// Bytes of one checkpoint of a model with `parameters` parameters: bf16 weights (2 bytes) and the
// optimizer state the plan counts (fp32 master weights and Adam's two moments, 12 bytes).
std::uint64_t checkpoint_bytes(std::uint64_t parameters);

// Check "disk": the free space of the filesystem `dir` is on (its nearest existing parent when it
// does not exist yet) against `need` bytes; 0 = only report it.
std::vector<Finding> check_free_space(const std::filesystem::path& dir, std::uint64_t need);

// Check "cache": the compile cache directory writable (a file created and removed there), or,
// when it does not exist yet, its nearest existing parent.
std::vector<Finding> check_cache_dir(const std::filesystem::path& dir);

}  // namespace trnslurm::health
