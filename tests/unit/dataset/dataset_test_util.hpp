#pragma once

// Helpers shared by the dataset tests: the fixtures written by tools/dataset-fixtures (Apache
// Arrow JS and a byte-level Megatron writer) and their expected counts (fixtures.hpp has the
// scratch directories).

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures.hpp"

namespace trnslurm::test {

inline std::filesystem::path datasets() {
  return fixture("datasets");
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

}  // namespace trnslurm::test
