#include "trnslurm/health/device_checks.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "trnslurm/node/sysfs.hpp"

namespace trnslurm::health {

namespace {

// The counters of stats/hardware/ (aws-neuron-driver neuron_sysfs_metrics.c, ecc_attrs_info_tbl;
// each a plain number, not a total/present pair), with what each counts, for the message.
struct Counter {
  std::string_view file;
  std::string_view what;
};
constexpr std::array<Counter, 3> hardware_counters{{
    {"sram_ecc_uncorrected", "uncorrectable SRAM errors"},
    {"mem_ecc_uncorrected", "uncorrectable HBM errors"},
    {"mem_ecc_repairable_uncorrected", "repairable uncorrected HBM errors"},
}};

std::string shown_root(const std::string& root) {
  return root == "/" ? "" : root;
}

}  // namespace

std::vector<Finding> check_devices(const Topology& t, const NodeInstance& instance) {
  std::vector<Finding> out;
  if (!instance.type) {
    out.push_back({"instances", Status::warn,
                   fmt::format("{}: the devices are not checked against a type; add it to the site's "
                               "instances file (docs/instances.md)",
                               instance.how)});
  } else {
    out.push_back({"instances", Status::ok, instance.how});
  }
  // Two plain values, not a copied optional: g++ 12 -O2 warns (-Wmaybe-uninitialized) on the copy.
  const bool has_promise = instance.type && !instance.by_device && instance.type->devices.value.has_value();
  const unsigned promised = has_promise ? *instance.type->devices.value : 0U;
  if (t.devices.empty()) {
    if (has_promise && promised > 0)
      out.push_back(
          {"neuron", Status::fail,
           fmt::format("no Neuron device under {}/sys/devices/virtual/neuron_device, {} promises {}: "
                       "is the driver loaded?",
                       shown_root(t.root), instance.type->name, promised)});
    else
      out.push_back({"neuron", Status::warn,
                     fmt::format("no Neuron device under {}/sys/devices/virtual/neuron_device: NeuronCore "
                                 "variables will not be set",
                                 shown_root(t.root))});
    return out;
  }
  std::size_t dev_nodes = 0;
  for (const auto& d : t.devices) dev_nodes += d.dev_node ? 1U : 0U;
  const auto cores = physical_cores(t, instance);
  std::vector<Finding> problems;
  if (has_promise && promised > t.devices.size())
    problems.push_back(
        {"neuron", Status::fail,
         fmt::format("{} of the {} devices {} has", t.devices.size(), promised, instance.type->name)});
  else if (has_promise && promised < t.devices.size())
    problems.push_back({"neuron", Status::warn,
                        fmt::format("{} devices here, the table says {} for {}", t.devices.size(), promised,
                                    instance.type->name)});
  std::size_t unknown_cores = 0;
  for (const auto& d : t.devices) {
    if (!d.core_count) {
      ++unknown_cores;
      continue;
    }
    if (instance.type && instance.type->cores_per_device.value &&
        *d.core_count < *instance.type->cores_per_device.value)
      problems.push_back({"neuron", Status::fail,
                          fmt::format("neuron{} has {} of its {} NeuronCores", d.index, *d.core_count,
                                      *instance.type->cores_per_device.value)});
  }
  if (unknown_cores)
    problems.push_back(
        {"neuron", Status::warn, fmt::format("{} devices without a readable core_count", unknown_cores)});
  if (dev_nodes != t.devices.size())
    problems.push_back({"neuron", Status::fail,
                        fmt::format("{} of the {} devices have no /dev/neuron<N>: is the driver loaded?",
                                    t.devices.size() - dev_nodes, t.devices.size())});
  out.push_back({"neuron", Status::ok,
                 fmt::format("{} devices, {} physical NeuronCores, /dev/neuron* for {} of them",
                             t.devices.size(), cores ? std::to_string(*cores) : "unknown", dev_nodes)});
  if (worst(problems) == Status::fail) out.back().status = Status::fail;
  out.insert(out.end(), problems.begin(), problems.end());
  return out;
}

std::vector<Finding> check_error_counters(const std::filesystem::path& root, const Topology& t) {
  std::vector<Finding> out;
  if (t.devices.empty()) return out;
  std::size_t unknown = 0, read = 0;
  for (const auto& d : t.devices) {
    const auto dir =
        root / "sys/devices/virtual/neuron_device" / fmt::format("neuron{}", d.index) / "stats/hardware";
    for (const auto& c : hardware_counters) {
      const auto n = read_sysfs_number(dir / c.file);
      if (!n) {
        ++unknown;
        continue;
      }
      ++read;
      if (*n > 0)
        out.push_back({"errors", Status::fail,
                       fmt::format("neuron device {}: {} {} ({})", d.index, *n, c.what, c.file)});
    }
  }
  if (unknown)
    out.push_back({"errors", Status::warn,
                   fmt::format("{} of {} counters unreadable under neuron*/stats/hardware: unknown, not zero "
                               "(a driver before 2.14, or one that moved them)",
                               unknown, unknown + read)});
  if (out.empty())
    out.push_back({"errors", Status::ok, fmt::format("{} uncorrectable-error counters, all zero", read)});
  return out;
}

}  // namespace trnslurm::health
