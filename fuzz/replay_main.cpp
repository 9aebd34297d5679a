// Without libFuzzer (the gcc build): replay every file given, or every file under each directory
// given, through LLVMFuzzerTestOneInput, so the crashers kept in tests/fuzz-regressions stay
// tested in CI. A crash, a sanitizer report or an abort fails the test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << file << '\n';
    return 1;
  }
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());  // exactly size bytes, for ASan
  std::cout << "replay " << file.string() << " (" << copy.size() << " bytes)\n";
  LLVMFuzzerTestOneInput(copy.data(), copy.size());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) failed += replay(f), ++count;
    } else {
      failed += replay(arg), ++count;
    }
  }
  std::cout << count << " inputs replayed\n";
  return failed == 0 && count > 0 ? 0 : 1;
}
