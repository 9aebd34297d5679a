#include "trnslurm/chain/poll_backoff.hpp"

#include <algorithm>

namespace trnslurm {

PollBackoff::PollBackoff(std::chrono::milliseconds first, std::chrono::milliseconds most)
    : first_(std::max(first, min_poll_wait)), most_(std::max(first_, most)), wait_(first_) {}

std::chrono::milliseconds PollBackoff::next(bool changed) {
  wait_ = changed ? first_ : std::min(most_, wait_ * 2);
  return wait_;
}

}  // namespace trnslurm
