#include "trnslurm/health/drain.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/util/printable.hpp"
#include "trnslurm/util/scontrol_record.hpp"

namespace trnslurm::health {

DrainDecision decide_drain(bool site_allows, bool marked, const std::vector<Finding>& findings) {
  DrainDecision d;
  if (!marked) {
    d.why_not = "not a pre-flight step";
    return d;
  }
  if (!site_allows) {
    d.why_not = "plugstack.conf does not allow draining (preflight_drain=yes)";
    return d;
  }
  std::vector<Finding> counted;
  for (const auto& f : findings)
    if (std::ranges::find(drain_checks, f.check) != drain_checks.end()) counted.push_back(f);
  const auto why = fail_reason(counted);
  if (why.empty()) {
    d.why_not = fmt::format("the root re-check ({}) found nothing failing", fmt::join(drain_checks, ", "));
    return d;
  }
  d.drain = true;
  // Reason= is one argument of scontrol's; no control character may reach Slurm's logs with it.
  d.reason = printable("trnslurm: " + why, drain_reason_limit);
  return d;
}

std::vector<std::string> drain_command(const std::string& scontrol, const std::string& node,
                                       const std::string& reason) {
  return {scontrol, "update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason};
}

bool drained_by_trnslurm(std::string_view show_node) {
  return scontrol_field(show_node, "State").find("DRAIN") != std::string_view::npos &&
         scontrol_field(show_node, "Reason") == "trnslurm:";
}

std::string drain_note(bool recipe_allows, std::optional<bool> site_allows,
                       const std::vector<std::string>& failed, const std::vector<std::string>& drained) {
  if (!recipe_allows) return "not drained: the recipe sets preflight_drain = false";
  std::vector<std::string> kept;
  for (const auto& n : failed)
    if (std::ranges::find(drained, n) == drained.end()) kept.push_back(n);
  if (kept.empty()) return fmt::format("drained {}", fmt::join(drained, ","));
  std::string why;
  if (site_allows == false)
    why = "the site does not allow it (plugstack.conf preflight_drain=yes)";
  else if (!site_allows)
    why = "draining is the site's choice (plugstack.conf preflight_drain), unreadable here";
  else
    why = fmt::format("the plugin's root re-check ({}) did not fail there", fmt::join(drain_checks, ", "));
  return fmt::format("{}{} not drained: {}",
                     drained.empty() ? "" : fmt::format("drained {}; ", fmt::join(drained, ",")),
                     fmt::join(kept, ","), why);
}

}  // namespace trnslurm::health
