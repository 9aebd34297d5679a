#pragma once
// What every unit test folder shares: the checked-in fixtures (tests/fixtures) and scratch
// directories that are removed with everything in them when the test ends.

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace trnslurm::test {

// A file or directory under tests/fixtures: fixture("recipes/minimal.toml").
inline std::string fixture(std::string_view relative) {
  return (std::filesystem::path(TRNSLURM_FIXTURES) / relative).string();
}

// A fresh, empty directory of its own, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "trnslurm-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace trnslurm::test
