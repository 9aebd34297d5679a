#include "trnslurm/health/resource_checks.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <system_error>

#include "trnslurm/plan/plan.hpp"

namespace trnslurm::health {

namespace {

namespace fs = std::filesystem;

// `dir`, or its nearest parent that exists: what a directory yet to be created will be part of.
fs::path existing(fs::path dir) {
  std::error_code ec;
  while (!dir.empty() && !fs::exists(dir, ec) && dir.has_relative_path()) dir = dir.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

}  // namespace

std::vector<Finding> check_open_files(std::uint64_t soft, std::uint64_t hard, bool neuron_node) {
  if (hard < needed_open_files)
    return {{"nofile", neuron_node ? Status::fail : Status::warn,
             fmt::format("open-files limit {} (hard): the Neuron runtime needs {}; raise it in "
                         "/etc/security/limits.conf or slurm.conf's PropagateResourceLimits",
                         hard, needed_open_files)}};
  if (soft < needed_open_files)
    return {{"nofile", Status::warn,
             fmt::format("open-files limit {} (soft, hard {}): the launcher must raise it to {} (ulimit -n)",
                         soft, hard, needed_open_files)}};
  return {{"nofile", Status::ok, fmt::format("open-files limit {}", soft)}};
}

std::uint64_t checkpoint_bytes(std::uint64_t parameters) {
  return parameters * (2 + 12);
}

std::vector<Finding> check_free_space(const fs::path& dir, std::uint64_t need) {
  const fs::path on = existing(dir);
  struct statvfs st {};
  if (statvfs(on.c_str(), &st) != 0)
    return {{"disk", Status::warn,
             fmt::format("{}: free space unknown ({})", on.string(),
                         std::error_code(errno, std::generic_category()).message())}};
  const std::uint64_t free = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  if (need == 0) return {{"disk", Status::ok, fmt::format("{} free at {}", format_bytes(free), on.string())}};
  if (free < need)
    return {{"disk", Status::fail,
             fmt::format("{} free at {}, one checkpoint needs {}: free space or move checkpoint_dir",
                         format_bytes(free), on.string(), format_bytes(need))}};
  return {{"disk", Status::ok,
           fmt::format("{} free at {} (one checkpoint: {})", format_bytes(free), on.string(),
                       format_bytes(need))}};
}

std::vector<Finding> check_cache_dir(const fs::path& dir) {
  const fs::path on = existing(dir);
  std::string probe = (on / ".trnslurm-health-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0)
    return {{"cache", Status::fail,
             fmt::format("{} is not writable ({}): compiled graphs cannot be cached; fix its permissions or "
                         "set the plugin's cache=",
                         on.string(), std::error_code(errno, std::generic_category()).message())}};
  close(fd);
  unlink(probe.c_str());
  if (on != dir)
    return {{"cache", Status::ok, fmt::format("{} will be created in {}", dir.string(), on.string())}};
  return {{"cache", Status::ok, fmt::format("{} writable", dir.string())}};
}

}  // namespace trnslurm::health
