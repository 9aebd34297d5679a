#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/instance/instance.hpp"

namespace trnslurm {

// What the node says about its Neuron devices. Every field read from sysfs is optional: a
// missing or unreadable file is "unknown", never zero (Neuron driver 2.31 moved nodes around).
struct NeuronDevice {
  std::uint32_t index = 0;
  std::optional<std::uint32_t> core_count;  // physical NeuronCores of this device
  std::optional<std::string> arch_type;     // info/architecture/arch_type
  std::optional<std::string> device_name;   // info/architecture/device_name
  bool dev_node = false;                    // /dev/neuron<N> exists
};

struct Topology {
  std::string root;                          // where it was read (for messages)
  std::optional<std::string> instance_type;  // DMI product_name, or the devices' instance_type
  // info/architecture/{arch_type,device_name} of the first device that has them: every device
  // of an instance is the same chip, and reading them for each would double the files read in
  // every step.
  std::optional<std::string> arch_type;
  std::optional<std::string> device_name;
  std::vector<NeuronDevice> devices;  // sorted by index

  // Physical NeuronCores: the sum of every device's core_count when each is known.
  std::optional<std::uint32_t> physical_cores() const;
};

// Reads /sys/devices/virtual/neuron_device, /dev/neuron* and the DMI product name under `root`.
// Never fails: what cannot be read is left unknown.
Topology read_topology(const std::filesystem::path& root);

// What the instance table says about this node (docs/instances.md): its type by the name the
// node reports, else, with no name, the device facts (cores per device, LNC) of a type whose
// device has the same name. The table is the bundled one, with the site's file when given.
struct NodeInstance {
  std::optional<InstanceType> type;
  bool by_device = false;  // only the device's facts apply: the device count is not the type's
  std::string how;         // for messages: "trn2.48xlarge (bundled)", "unknown type m5.large"
};
Result<NodeInstance> node_instance(const Topology& topology, const std::optional<InstanceFile>& site);
// The same with the site's file read from `site_path` (plugstack instances=, %n expanded; "" =
// none), as the plugin, `trnslurm env` and `trnslurm doctor` do.
Result<NodeInstance> read_node_instance(const Topology& topology, const std::string& site_path);

// Physical NeuronCores: read from sysfs, else the type's devices x cores per device when the
// node has devices at all (none means no driver or no chip: unknown, even on a trn instance).
std::optional<std::uint32_t> physical_cores(const Topology& topology, const NodeInstance& instance);

}  // namespace trnslurm
