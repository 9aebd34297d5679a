#include "trnslurm/util/printable.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace trnslurm {

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 3);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    std::string piece;
    if (c == '\n') {
      piece = "\\n";
    } else if (c == '\r') {
      piece = "\\r";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c == '\\') {
      piece = "\\\\";
    } else if (u < 0x20 || u == 0x7f) {
      piece = fmt::format("\\x{:02x}", u);
    } else {
      piece = std::string(1, c);
    }
    if (out.size() + piece.size() > max) {
      out += "...";
      return out;
    }
    out += piece;
  }
  return out;
}

}  // namespace trnslurm
