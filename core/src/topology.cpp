#include "trnslurm/topology.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <system_error>

namespace trnslurm {

namespace {

namespace fs = std::filesystem;

// sysfs values are one short line; never read more than a page of whatever sits there.
std::optional<std::string> read_line(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.pop_back();
  if (text.empty()) return std::nullopt;
  return text;
}

std::optional<std::uint32_t> read_number(const fs::path& file) {
  const auto text = read_line(file);
  if (!text) return std::nullopt;
  std::uint32_t value = 0;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || ptr != text->data() + text->size()) return std::nullopt;
  return value;
}

std::optional<std::uint32_t> device_index(std::string_view name) {
  if (!name.starts_with("neuron") || name.size() == 6) return std::nullopt;
  name.remove_prefix(6);
  std::uint32_t value = 0;
  const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (ec != std::errc{} || ptr != name.data() + name.size()) return std::nullopt;
  return value;
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
    dev.arch_type = read_line(it->path() / "info/architecture/arch_type");
    dev.device_name = read_line(it->path() / "info/architecture/device_name");
    if (!topo.instance_type) topo.instance_type = read_line(it->path() / "info/architecture/instance_type");
    std::error_code dev_ec;
    dev.dev_node = fs::exists(root / "dev" / ("neuron" + std::to_string(*index)), dev_ec);
    topo.devices.push_back(std::move(dev));
  }
  std::ranges::sort(topo.devices, {}, &NeuronDevice::index);

  if (topo.instance_type) topo.family = family_of(*topo.instance_type);
  if (topo.family == Family::unknown) {
    for (const auto& d : topo.devices) {
      if (d.device_name && (topo.family = family_of(*d.device_name)) != Family::unknown) break;
    }
  }
  return topo;
}

}  // namespace trnslurm
