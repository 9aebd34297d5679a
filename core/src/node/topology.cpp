#include "trnslurm/node/topology.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "trnslurm/node/sysfs.hpp"
#include "trnslurm/util/fd.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

namespace {

namespace fs = std::filesystem;

struct CloseDir {
  void operator()(DIR* dir) const noexcept { closedir(dir); }
};

std::optional<std::uint32_t> device_index(std::string_view name) {
  if (!name.starts_with("neuron") || name.size() == 6) return std::nullopt;
  name.remove_prefix(6);
  return parse_number<std::uint32_t>(name);
}

}  // namespace

std::optional<std::uint32_t> Topology::physical_cores() const {
  if (!devices.empty() &&
      std::ranges::all_of(devices, [](const auto& d) { return d.core_count.has_value(); })) {
    std::uint32_t sum = 0;
    for (const auto& d : devices) sum += *d.core_count;
    return sum;
  }
  return std::nullopt;
}

Result<NodeInstance> node_instance(const Topology& topology, const std::optional<InstanceFile>& site) {
  NodeInstance out;
  // Without a site file only the node's own type is parsed (every step does this).
  std::optional<InstanceTable> table;
  if (site) {
    auto loaded = load_instance_table(site);
    if (!loaded) return std::unexpected(loaded.error());
    table = std::move(*loaded);
  }
  if (topology.instance_type) {
    const auto& name = *topology.instance_type;
    if (table) {
      if (const auto* t = table->find(name)) out.type = *t;
    } else {
      out.type = bundled_instance(name);
    }
    if (out.type) {
      out.how = fmt::format("{} ({})", name, to_string(out.type->origin));
      return out;
    }
    out.how = fmt::format("unknown type {}", name);
  }
  if (topology.device_name) {
    const InstanceTable& known = table ? *table : bundled_instances();
    for (const auto& t : known.types())
      if (t.device.value == *topology.device_name) {
        out.type = t;
        out.by_device = true;
        out.how = fmt::format("{}device {} (as on {})", out.how.empty() ? "" : out.how + ", ",
                              *topology.device_name, t.name);
        return out;
      }
  }
  if (out.how.empty()) out.how = "unknown type (no DMI product_name, no device name)";
  return out;
}

Result<NodeInstance> read_node_instance(const Topology& topology, const std::string& site_path) {
  if (site_path.empty()) return node_instance(topology, std::nullopt);
  auto site = read_site_instances(site_path);
  if (!site) return std::unexpected(site.error());
  return node_instance(topology, *site);
}

std::optional<std::uint32_t> physical_cores(const Topology& topology, const NodeInstance& instance) {
  if (auto read = topology.physical_cores()) return read;
  if (topology.devices.empty() || !instance.type || !instance.type->cores_per_device.value)
    return std::nullopt;
  // The type's device count only when the node is that type; a device-only match knows the
  // cores of each device, and the devices are those the node shows.
  const std::uint64_t devices = instance.by_device
                                    ? topology.devices.size()
                                    : instance.type->devices.value.value_or(topology.devices.size());
  return static_cast<std::uint32_t>(devices * *instance.type->cores_per_device.value);
}

Topology read_topology(const fs::path& root) {
  Topology topo;
  topo.root = root.string();
  // Every file is opened relative to the root's and the device directory's descriptors: the
  // plugin reads this tree in every step, and resolving each full path again was most of it.
  const Fd root_fd(open(root.empty() ? "." : root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) return topo;
  topo.instance_type = read_sysfs_line_at(root_fd.get(), "sys/devices/virtual/dmi/id/product_name");

  const int base_fd =
      openat(root_fd.get(), "sys/devices/virtual/neuron_device", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base_fd < 0) return topo;
  const std::unique_ptr<DIR, CloseDir> base(fdopendir(base_fd));
  if (!base) {
    close(base_fd);
    return topo;
  }
  std::string file;
  const auto read_line = [&](std::string_view device, std::string_view leaf) {
    file.assign(device).append("/").append(leaf);
    return read_sysfs_line_at(base_fd, file.c_str());
  };
  while (const dirent* entry = readdir(base.get())) {
    const std::string_view name = entry->d_name;
    const auto index = device_index(name);
    if (!index) continue;
    NeuronDevice dev;
    dev.index = *index;
    if (const auto count = read_line(name, "core_count")) {
      const auto n = parse_number<std::uint64_t>(*count);
      if (n && *n <= UINT32_MAX) dev.core_count = static_cast<std::uint32_t>(*n);
    }
    if (!topo.arch_type) topo.arch_type = read_line(name, "info/architecture/arch_type");
    if (!topo.device_name) topo.device_name = read_line(name, "info/architecture/device_name");
    if (!topo.instance_type) topo.instance_type = read_line(name, "info/architecture/instance_type");
    struct stat st {};
    file.assign("dev/neuron").append(std::to_string(*index));
    dev.dev_node = fstatat(root_fd.get(), file.c_str(), &st, 0) == 0;
    topo.devices.push_back(std::move(dev));
  }
  std::ranges::sort(topo.devices, {}, &NeuronDevice::index);
  return topo;
}

}  // namespace trnslurm
