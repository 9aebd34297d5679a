#include "trnslurm/chain/poll_backoff.hpp"

#include <algorithm>

namespace trnslurm {

PollBackoff::PollBackoff(std::chrono::milliseconds first, std::chrono::milliseconds most)
    : first_(first), most_(std::max(first, most)), wait_(first) {}

std::chrono::milliseconds PollBackoff::next(bool changed) {
  wait_ = changed ? first_ : std::min(most_, wait_ * 2);
  return wait_;
}

}  // namespace trnslurm
