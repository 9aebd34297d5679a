#pragma once
// A fake node of tests/fixtures/neuron copied into a scratch directory, so that a test can break
// one thing in it (a counter, a device, a process holding a device).

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "fixtures.hpp"
#include "trnslurm/health/finding.hpp"

namespace trnslurm::test {

inline std::filesystem::path copy_tree(const ScratchDir& scratch, std::string_view name) {
  const auto to = scratch / "root";
  std::filesystem::copy(
      fixture("neuron/" + std::string(name)), to,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  return to;
}

inline void write_text(const std::filesystem::path& file, std::string_view text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// How many findings of `check` have `status`.
inline std::size_t count(const std::vector<health::Finding>& fs, std::string_view check,
                         health::Status status) {
  std::size_t n = 0;
  for (const auto& f : fs) n += f.check == check && f.status == status ? 1U : 0U;
  return n;
}

}  // namespace trnslurm::test
