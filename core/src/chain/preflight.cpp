#include "trnslurm/chain/preflight.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace trnslurm {

std::optional<RestartEvent> preflight_event(const std::vector<health::NodeRow>& rows,
                                            const std::vector<RestartEvent>& log,
                                            std::uint32_t max_exclusions) {
  RestartEvent e;
  e.cause = "preflight";
  for (const auto& r : rows) {
    if (r.status != health::Status::fail) continue;
    e.nodes.push_back(r.node);
    e.why += fmt::format("{}{}: {}", e.why.empty() ? "" : "; ", r.node, r.why);
  }
  if (e.nodes.empty()) return std::nullopt;
  const auto excluded = std::ranges::count(log, std::string("exclude"), &RestartEvent::event);
  if (static_cast<std::uint64_t>(excluded) >= max_exclusions) {
    e.event = "gave-up";
    e.max_exclusions = max_exclusions;
  } else {
    e.event = "exclude";
  }
  return e;
}

}  // namespace trnslurm
