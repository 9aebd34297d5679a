#pragma once

// Megatron-LM / NeMo indexed datasets (MMIDIDX .idx beside a .bin): sequences and tokens from the
// header and the sizes array; --verify also checks the pointers and document indices. Internal.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm::dataset {

struct MegatronCount {
  std::uint64_t sequences = 0;
  std::uint64_t documents = 0;  // entries of document_indices minus one
  std::uint64_t tokens = 0;
  std::uint8_t dtype_code = 0;
  std::vector<std::string> warnings;
};

// The bytes of `tokens` tokens of a dtype code: what the .bin must hold. nullopt for a code that
// is no token type, or when it does not fit in 64 bits (int64 tokens counted by an .idx of
// ~12 GiB can claim that much; without the check the product wrapped and a small .bin matched).
std::optional<std::uint64_t> token_bytes(std::uint64_t tokens, std::uint8_t dtype_code);

// idx is the .idx file; its .bin sits beside it with the same prefix.
Result<MegatronCount> count_megatron(const std::filesystem::path& idx, bool verify);

}  // namespace trnslurm::dataset
