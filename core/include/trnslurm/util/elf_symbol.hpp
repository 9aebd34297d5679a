#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The value of a 4-byte exported data symbol of an ELF64 little-endian shared object, read
// from the file without loading it: `trnslurm doctor` reads the plugin's plugin_version this
// way (dlopen would need slurmstepd's symbols).
Result<std::uint32_t> read_u32_symbol(const std::filesystem::path& file, std::string_view name);

}  // namespace trnslurm
