#pragma once
// The train stage's progress in status and watch (docs/progress.md): the lines under the stage
// table, and the "progress" object of status --json.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnslurm/progress/progress.hpp"

namespace trnslurm::cli {

std::string format_progress(const ProgressSummary& s, bool colour);
nlohmann::json progress_json(const std::optional<ProgressSummary>& s);

}  // namespace trnslurm::cli
