#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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

enum class Family { unknown, trn1, trn2, inf2 };

struct Topology {
  std::string root;                          // where it was read (for messages)
  std::optional<std::string> instance_type;  // DMI product_name, or the devices' instance_type
  // info/architecture/{arch_type,device_name} of the first device that has them: every device
  // of an instance is the same chip, and reading them for each would double the files read in
  // every step.
  std::optional<std::string> arch_type;
  std::optional<std::string> device_name;
  std::vector<NeuronDevice> devices;  // sorted by index
  Family family = Family::unknown;

  // Physical NeuronCores: the sum of every device's core_count when each is known, else the
  // instance type's published count when devices exist, else unknown.
  std::optional<std::uint32_t> physical_cores() const;
};

// Reads /sys/devices/virtual/neuron_device, /dev/neuron* and the DMI product name under `root`.
// Never fails: what cannot be read is left unknown.
Topology read_topology(const std::filesystem::path& root);

// The family from an instance type such as "trn1n.32xlarge", or from a device name.
Family family_of(std::string_view instance_type_or_device);
std::string_view to_string(Family f);

// Published NeuronCore counts (trainium-facts.md §1), physical cores.
std::optional<std::uint32_t> published_physical_cores(std::string_view instance_type);

}  // namespace trnslurm
