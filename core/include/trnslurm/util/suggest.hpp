#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnslurm {

// Edit distance (insertions, deletions, substitutions, adjacent transpositions), ASCII
// case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a likely typo (at most a third
// of the word's length, at least 1 edit allowed), for "did you mean ...?" hints.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trnslurm
