#pragma once
// The one way text becomes a number: the whole text, nothing before or after, in range.

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace trnslurm {

// `text` as a T (an integer, or a floating-point number in from_chars' general format): nullopt
// for empty text, any character that is not part of the number, or a value out of T's range.
template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

}  // namespace trnslurm
