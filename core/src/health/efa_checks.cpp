#include "trnslurm/health/efa_checks.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <system_error>

namespace trnslurm::health {

namespace {

namespace fs = std::filesystem;

// How many EFA devices the type should have; nullopt when the table does not say.
std::optional<std::uint64_t> promised_efa(const NodeInstance& instance) {
  if (!instance.type || instance.by_device) return std::nullopt;
  return instance.type->efa_devices.value;
}

}  // namespace

std::optional<std::size_t> count_efa_devices(const fs::path& root) {
  std::error_code ec;
  fs::directory_iterator it(root / "sys/class/infiniband", ec);
  if (ec) return std::nullopt;
  std::size_t n = 0;
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    std::array<char, 512> buf{};
    const auto link = it->path() / "device/driver";
    const ssize_t len = readlink(link.c_str(), buf.data(), buf.size() - 1);
    if (len > 0 && fs::path(std::string(buf.data(), static_cast<std::size_t>(len))).filename() == "efa") ++n;
  }
  return n;
}

std::vector<Finding> check_efa_devices(const fs::path& root, const NodeInstance& instance) {
  const auto promised = promised_efa(instance);
  const auto found = count_efa_devices(root);
  const std::string where = (root / "sys/class/infiniband").string();
  if (!promised) {
    if (!found)
      return {{"efa", Status::ok, fmt::format("no {}; the type's EFA devices are not known", where)}};
    return {{"efa", Status::ok, fmt::format("{} EFA devices; the type's count is not known", *found)}};
  }
  if (*promised == 0) return {{"efa", Status::ok, fmt::format("{} has no EFA devices", instance.type->name)}};
  if (!found)
    return {{"efa", Status::fail,
             fmt::format("no {}: {} has {} EFA devices (is the efa driver loaded?)", where,
                         instance.type->name, *promised)}};
  if (*found < *promised)
    return {{"efa", Status::fail,
             fmt::format("{} of the {} EFA devices {} has: a link or adapter is missing", *found, *promised,
                         instance.type->name)}};
  return {{"efa", Status::ok, fmt::format("{} EFA devices, as {} has", *found, instance.type->name)}};
}

std::vector<Finding> check_libfabric(const std::optional<EfaProbe>& probe, const NodeInstance& instance) {
  const auto promised = promised_efa(instance);
  if (promised && *promised == 0) return {{"libfabric", Status::ok, "not needed: no EFA on this type"}};
  if (!probe || probe->state == EfaState::unknown)
    return {{"libfabric", Status::warn,
             fmt::format("no answer from libfabric ({}): the efa provider is unknown",
                         probe ? probe->detail : "not probed")}};
  if (probe->state == EfaState::present) return {{"libfabric", Status::ok, "efa provider: " + probe->detail}};
  if (promised)
    return {{"libfabric", Status::fail,
             fmt::format("no efa provider ({}) on {}, which has {} EFA devices: install the EFA software "
                         "(aws-efa-installer)",
                         probe->detail, instance.type->name, *promised)}};
  return {{"libfabric", Status::ok, "no efa provider (" + probe->detail + "); none expected of this type"}};
}

}  // namespace trnslurm::health
