#include "trnslurm/health/core_holders.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <system_error>

#include "trnslurm/node/sysfs.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::health {

namespace {

namespace fs = std::filesystem;

// The device index of a descriptor's target "/dev/neuron<N>", nullopt for anything else.
std::optional<unsigned> neuron_target(const fs::path& fd) {
  std::array<char, 256> buf{};
  const ssize_t n = readlink(fd.c_str(), buf.data(), buf.size() - 1);
  if (n <= 0) return std::nullopt;
  std::string_view target(buf.data(), static_cast<std::size_t>(n));
  constexpr std::string_view prefix = "/dev/neuron";
  if (!target.starts_with(prefix)) return std::nullopt;
  return parse_number<unsigned>(target.substr(prefix.size()));
}

}  // namespace

std::vector<Finding> check_core_holders(const fs::path& root, const std::vector<pid_t>& own) {
  std::vector<Finding> out;
  const fs::path proc = root / "proc";
  std::error_code ec;
  fs::directory_iterator it(proc, ec);
  if (ec) {
    out.push_back({"cores", Status::warn,
                   fmt::format("{} unreadable ({}): who holds the NeuronCores is unknown", proc.string(),
                               ec.message())});
    return out;
  }
  std::size_t unreadable = 0;
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const auto pid = parse_number<pid_t>(it->path().filename().string());
    if (!pid || std::ranges::find(own, *pid) != own.end()) continue;
    std::error_code fd_ec;
    std::set<unsigned> devices;
    for (fs::directory_iterator fd(it->path() / "fd", fd_ec), fd_end; !fd_ec && fd != fd_end;
         fd.increment(fd_ec))
      if (const auto dev = neuron_target(fd->path())) devices.insert(*dev);
    if (fd_ec && fd_ec != std::errc::no_such_file_or_directory) ++unreadable;
    if (devices.empty()) continue;
    const auto comm = read_sysfs_line(it->path() / "comm").value_or("?");
    out.push_back(
        {"cores", Status::fail,
         fmt::format("pid {} ({}) holds neuron device{} {}: its NeuronCores are not free (end it, or "
                     "reboot the node)",
                     *pid, comm, devices.size() == 1 ? "" : "s", fmt::join(devices, ","))});
  }
  if (unreadable)
    out.push_back(
        {"cores", Status::warn,
         fmt::format("the descriptors of {} processes are not readable here (not root): they may hold "
                     "NeuronCores",
                     unreadable)});
  if (out.empty()) out.push_back({"cores", Status::ok, "no other process holds a Neuron device"});
  return out;
}

}  // namespace trnslurm::health
