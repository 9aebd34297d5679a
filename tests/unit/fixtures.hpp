#pragma once
// What every unit test folder shares: the checked-in fixtures (tests/fixtures) and scratch
// directories that are removed with everything in them when the test ends.

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace trnslurm::test {

// tests/fixtures in this checkout (fixtures.cpp).
std::string fixtures_dir();

// A file or directory under tests/fixtures: fixture("recipes/minimal.toml").
inline std::string fixture(std::string_view relative) {
  return (std::filesystem::path(fixtures_dir()) / relative).string();
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

// For a test that needs root (files given away, a root-owned state directory): as another user
// it prints the line CTest's SKIP_REGULAR_EXPRESSION turns into "skipped" (tests/CMakeLists.txt),
// and the caller returns without an assertion, which --warn NoAssertions makes a failure when the
// binary runs on its own: never a pass.
inline bool skip_unless_root(const char* why) {
  if (::geteuid() == 0) return false;
  std::printf("trnslurm-test-skipped: needs root: %s\n", why);
  return true;
}

}  // namespace trnslurm::test
