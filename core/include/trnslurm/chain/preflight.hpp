#pragma once
// What the train stage's pre-flight makes of its nodes' rows (docs/health.md): the event its
// restarts log gets when a node fails.

#include <cstdint>
#include <optional>
#include <vector>

#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/health/cluster_report.hpp"

namespace trnslurm {

// Nothing when no node fails. Otherwise an "exclude" event (the job requeues itself without the
// failing nodes), or "gave-up" once `log` holds max_exclusions exclusions already: cause
// "preflight", the failing nodes, and each one's reason ("n3: errors: ...", "; " between them).
// The caller sets restart, job and time.
std::optional<RestartEvent> preflight_event(const std::vector<health::NodeRow>& rows,
                                            const std::vector<RestartEvent>& log,
                                            std::uint32_t max_exclusions);

}  // namespace trnslurm
