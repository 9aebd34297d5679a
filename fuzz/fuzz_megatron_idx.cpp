// The Megatron .idx reader, with and without --verify. The .bin beside it is a sparse file whose
// size is the input's length times 8, so both the "sizes match the .bin" and the mismatch paths run.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "dataset/megatron_idx.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto idx = trnslurm::fuzz::write_scratch("input.idx", data, size);
  const auto bin = trnslurm::fuzz::write_scratch("input.bin", data, 0);
  std::filesystem::resize_file(bin, size * 8);
  (void)trnslurm::dataset::count_megatron(idx, false);
  (void)trnslurm::dataset::count_megatron(idx, true);
  return 0;
}
