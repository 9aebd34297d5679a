#include "slurm_time.hpp"

#include <array>
#include <cstddef>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

namespace {

// A field of a Slurm time limit: digits only, and small enough that the seconds cannot overflow.
bool time_field(std::string_view text, std::uint64_t& value) {
  const auto v = parse_number<std::uint64_t>(text);
  if (!v || *v > 1'000'000'000) return false;
  value = *v;
  return true;
}

}  // namespace

std::optional<std::uint64_t> slurm_time_seconds(std::string_view text) {
  std::uint64_t days = 0;
  const auto dash = text.find('-');
  const bool with_days = dash != std::string_view::npos;  // then the fields are D-H[:M[:S]]
  if (with_days) {
    if (!time_field(text.substr(0, dash), days)) return std::nullopt;
    text.remove_prefix(dash + 1);
  }
  std::array<std::uint64_t, 3> parts{};
  std::size_t n = 0;
  for (;;) {
    const auto colon = text.find(':');
    if (n == parts.size() || !time_field(text.substr(0, colon), parts[n++])) return std::nullopt;
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  std::uint64_t h = 0, m = 0, sec = 0;
  if (with_days || n == 3) {
    h = parts[0];
    m = parts[1];
    sec = parts[2];
  } else {
    m = parts[0];
    sec = parts[1];
  }
  return ((days * 24 + h) * 60 + m) * 60 + sec;
}

// A hand-written check rather than std::regex: compiling the pattern cost a third of `submit`.
bool valid_slurm_time(std::string_view time) {
  return time.empty() || time == "UNLIMITED" || time == "unlimited" || time == "infinite" ||
         slurm_time_seconds(time).has_value();
}

}  // namespace trnslurm
