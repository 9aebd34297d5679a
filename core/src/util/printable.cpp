#include "trnslurm/util/printable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

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

namespace {

// The length of the UTF-8 sequence at `i`, 0 when it is not one (overlong forms, surrogates and
// code points past U+10FFFF are not).
std::size_t utf8_length(std::string_view t, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(t[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < t.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF && cont(1)) {
    cp = ((c & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
    cp = ((c & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    return cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    cp = ((c & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
    return cp >= 0x10000 && cp <= 0x10FFFF ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::optional<Unrepresentable> find_unrepresentable(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const auto n = utf8_length(text, i, cp);
    if (n == 0)
      return Unrepresentable{
          i, fmt::format("a byte that is not UTF-8 (0x{:02x})", static_cast<unsigned char>(text[i]))};
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7F && cp <= 0x9F))
      return Unrepresentable{i,
                             fmt::format("a control character (U+{:04X})", static_cast<std::uint32_t>(cp))};
    i += n;
  }
  return std::nullopt;
}

}  // namespace trnslurm
