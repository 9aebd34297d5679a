#pragma once
// How often `watch` and `logs -f` ask Slurm: every question is an RPC to slurmctld, and a chain
// is followed for days. Quickly while something changes, less and less often while nothing does.

#include <chrono>

namespace trnslurm {

// No wait is shorter, whatever an option said: each look is an RPC to slurmctld.
inline constexpr std::chrono::milliseconds min_poll_wait{100};

class PollBackoff {
 public:
  // `first`: the wait after a change; doubled after every look that saw no change, up to
  // `most` (raised to `first` when smaller). Both raised to min_poll_wait when below it.
  PollBackoff(std::chrono::milliseconds first, std::chrono::milliseconds most);
  // The wait before the next look, given whether the last one saw a change.
  std::chrono::milliseconds next(bool changed);

 private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds most_;
  std::chrono::milliseconds wait_;
};

}  // namespace trnslurm
