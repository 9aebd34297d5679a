#pragma once

#include <array>
#include <string_view>

namespace trnslurm {

// The four stages, in chain order: a recipe's [stages.<name>] sections and the chain's jobs.
inline constexpr std::array<std::string_view, 4> stage_names{"convert", "precompile", "train",
                                                             "convert_back"};

}  // namespace trnslurm
