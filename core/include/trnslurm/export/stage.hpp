#pragma once
// One stage of an exported chain as another scheduler runs it: what AWS Batch's job definition
// and Kubernetes' MPIJob both take from the rendered chain (docs/export.md).

#include <cstdint>
#include <optional>
#include <string>

namespace trnslurm {

struct ExportStage {
  std::string name;
  std::uint32_t nodes = 1;
  std::uint64_t seconds = 0;  // the stage's time limit; 0 = none
  // The train stage's attempts (max_restarts + 1; AWS Batch: at most 10): a lost node is retried.
  std::optional<std::uint32_t> attempts;
};

}  // namespace trnslurm
