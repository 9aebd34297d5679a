#pragma once
// Draining a node the pre-flight found broken, where the site allows it (docs/health.md, step 3;
// docs/plugin.md, "Draining"). Draining needs Slurm operator rights, which a user's job lacks:
// the plugin does it in slurmstepd, as root, at the end of a step `trnslurm preflight` marked
// (--trn-preflight). There it re-runs only the checks whose inputs the user cannot change and
// drains on their FAIL alone, so a user can cause a re-check, never the drain of a healthy node.
// The user's side only reports afterwards what Slurm shows.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/health/finding.hpp"

namespace trnslurm::health {

// The checks re-run as root: they read the site's root= tree and instance table, nothing else.
// The others read what the user controls (their own processes, the checkpoint and cache
// directories, the step's limits) and never drain a node.
inline constexpr std::array<std::string_view, 3> drain_checks{"topology", "errors", "efa"};

// Slurm keeps a node's reason whole, but people read it in one `sinfo -R` column.
inline constexpr std::size_t drain_reason_limit = 200;

struct DrainDecision {
  bool drain = false;
  std::string reason;   // scontrol's Reason=: "trnslurm: <each FAIL>", printable, capped
  std::string why_not;  // when not draining: for the plugin's log line
};

// site_allows: plugstack.conf preflight_drain=yes; marked: the step asked with --trn-preflight;
// findings: the drain_checks just run as root on this node.
DrainDecision decide_drain(bool site_allows, bool marked, const std::vector<Finding>& findings);

// scontrol's arguments that drain `node` with `reason` (run without a shell).
std::vector<std::string> drain_command(const std::string& scontrol, const std::string& node,
                                       const std::string& reason);

// Whether `scontrol show node -o` output shows the node drained (or draining) by trnslurm.
bool drained_by_trnslurm(std::string_view show_node);

// What the restarts log says of the failing nodes' draining, seen from the job after the step:
// recipe_allows = the recipe's preflight_drain; site_allows = plugstack.conf's preflight_drain
// (nullopt when the job could not read it); drained = the failing nodes Slurm shows drained by
// trnslurm.
std::string drain_note(bool recipe_allows, std::optional<bool> site_allows,
                       const std::vector<std::string>& failed, const std::vector<std::string>& drained);

}  // namespace trnslurm::health
