#include "trnslurm/health/finding.hpp"

#include <algorithm>
#include <array>

#include "trnslurm/util/enum_names.hpp"

namespace trnslurm::health {

namespace {
constexpr std::array<EnumName<Status>, 3> status_names{
    {{Status::ok, "ok"}, {Status::warn, "warn"}, {Status::fail, "FAIL"}}};
}  // namespace

std::string_view to_string(Status status) {
  return name_of(status_names, status);
}

std::optional<Status> parse_status(std::string_view text) {
  return value_named(status_names, text);
}

Status worst(const std::vector<Finding>& findings) {
  Status w = Status::ok;
  for (const auto& f : findings) w = std::max(w, f.status);
  return w;
}

std::string fail_reason(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    if (f.status != Status::fail) continue;
    if (!out.empty()) out += "; ";
    out += f.check + ": " + f.detail;
  }
  return out;
}

}  // namespace trnslurm::health
