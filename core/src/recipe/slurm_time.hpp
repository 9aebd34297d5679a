#pragma once
// Slurm time limits as a stage's `time` holds them.

#include <cstdint>
#include <optional>
#include <string_view>

namespace trnslurm {

// Seconds of a Slurm time limit ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"); nullopt for
// the partition default (""), UNLIMITED, or text that is not a time limit.
std::optional<std::uint64_t> slurm_time_seconds(std::string_view text);

// Is `time` something sbatch --time accepts: a time limit, "" (the partition's default) or
// unlimited?
bool valid_slurm_time(std::string_view time);

}  // namespace trnslurm
