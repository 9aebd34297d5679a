#pragma once

// Helpers shared by the dataset tests: the fixtures written by tools/dataset-fixtures (Apache
// Arrow JS and a byte-level Megatron writer) and their expected counts, and scratch directories.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace trnslurm::test {

inline std::filesystem::path datasets() {
  return std::filesystem::path(TRNSLURM_FIXTURES) / "datasets";
}

inline const nlohmann::json& expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(datasets() / "expected.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

inline std::vector<char> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& p, const char* data, std::size_t n) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(n));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// A fresh directory, removed with everything in it when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "trnslurm-dataset-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace trnslurm::test
