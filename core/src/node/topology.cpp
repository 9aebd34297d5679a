#include "trnslurm/node/topology.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <system_error>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

namespace {

namespace fs = std::filesystem;

// sysfs values are one short line; never read more than a page of whatever sits there. POSIX
// reads, not iostreams: this runs in every step on every node (user_init).
std::optional<std::string> read_line(const fs::path& file) {
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::array<char, 4096> buf{};
  const ssize_t n = read(fd, buf.data(), buf.size());
  close(fd);
  if (n <= 0) return std::nullopt;
  std::string text(buf.data(), static_cast<std::size_t>(n));
  if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.pop_back();
  if (text.empty()) return std::nullopt;
  return text;
}

std::optional<std::uint32_t> read_number(const fs::path& file) {
  const auto text = read_line(file);
  if (!text) return std::nullopt;
  return parse_number<std::uint32_t>(*text);
}

std::optional<std::uint32_t> device_index(std::string_view name) {
  if (!name.starts_with("neuron") || name.size() == 6) return std::nullopt;
  name.remove_prefix(6);
  return parse_number<std::uint32_t>(name);
}

}  // namespace

Family family_of(std::string_view text) {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(),
                         [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
  if (lower.starts_with("trn2") || lower.find("trainium2") != std::string::npos) return Family::trn2;
  if (lower.starts_with("trn1") || lower.find("trainium") != std::string::npos) return Family::trn1;
  if (lower.starts_with("inf2") || lower.find("inferentia2") != std::string::npos) return Family::inf2;
  return Family::unknown;
}

std::string_view to_string(Family f) {
  switch (f) {
    case Family::trn1:
      return "trn1";
    case Family::trn2:
      return "trn2";
    case Family::inf2:
      return "inf2";
    case Family::unknown:
      break;
  }
  return "unknown";
}

std::optional<std::uint32_t> published_physical_cores(std::string_view instance_type) {
  if (instance_type == "trn1.32xlarge" || instance_type == "trn1n.32xlarge") return 32;
  if (instance_type == "trn1.2xlarge") return 2;
  if (instance_type == "trn2.48xlarge" || instance_type == "trn2u.48xlarge") return 128;
  return std::nullopt;
}

std::optional<std::uint32_t> Topology::physical_cores() const {
  if (!devices.empty() &&
      std::ranges::all_of(devices, [](const auto& d) { return d.core_count.has_value(); })) {
    std::uint32_t sum = 0;
    for (const auto& d : devices) sum += *d.core_count;
    return sum;
  }
  // No device at all means no driver or no chip: unknown, even on a trn instance.
  if (!devices.empty() && instance_type) return published_physical_cores(*instance_type);
  return std::nullopt;
}

Topology read_topology(const fs::path& root) {
  Topology topo;
  topo.root = root.string();
  topo.instance_type = read_line(root / "sys/devices/virtual/dmi/id/product_name");

  std::error_code ec;
  const fs::path base = root / "sys/devices/virtual/neuron_device";
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const auto index = device_index(it->path().filename().string());
    if (!index) continue;
    NeuronDevice dev;
    dev.index = *index;
    dev.core_count = read_number(it->path() / "core_count");
    if (!topo.arch_type) topo.arch_type = read_line(it->path() / "info/architecture/arch_type");
    if (!topo.device_name) topo.device_name = read_line(it->path() / "info/architecture/device_name");
    if (!topo.instance_type) topo.instance_type = read_line(it->path() / "info/architecture/instance_type");
    struct stat st {};
    dev.dev_node = stat((root / "dev" / ("neuron" + std::to_string(*index))).c_str(), &st) == 0;
    topo.devices.push_back(std::move(dev));
  }
  std::ranges::sort(topo.devices, {}, &NeuronDevice::index);

  if (topo.instance_type) topo.family = family_of(*topo.instance_type);
  if (topo.family == Family::unknown && topo.device_name) topo.family = family_of(*topo.device_name);
  return topo;
}

}  // namespace trnslurm
