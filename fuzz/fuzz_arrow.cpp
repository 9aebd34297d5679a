// The Arrow IPC readers, stream and file format (the reader tells them apart by the ARROW1
// magic), counted plain and with --verify, through the path API as the CLI calls it.
#include <cstddef>
#include <cstdint>

#include "dataset/arrow_ipc.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = trnslurm::fuzz::write_scratch("input.arrow", data, size);
  trnslurm::dataset::ArrowOptions options;
  (void)trnslurm::dataset::count_arrow(path, options);
  options.verify = true;
  options.seq_len = 4;
  (void)trnslurm::dataset::count_arrow(path, options);
  return 0;
}
