#pragma once
// Instance types as data (docs/instances.md): the table compiled in from
// instances/instances.toml, a site's file beside the plugin's configuration, and a recipe's own
// [instances.<name>] tables, all in one format. Every figure carries the public source it comes
// from and whether that source states it (confirmed); what is not known has no value.
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/util/error.hpp"
#include "trnslurm/util/source_pos.hpp"

namespace trnslurm {

enum class InstanceOrigin { bundled, site, recipe };
std::string_view to_string(InstanceOrigin origin);

// A public page or file that figures cite: a [sources.<id>] table.
struct InstanceSource {
  std::string id;
  std::string title;
  std::string url;
  std::string repo;  // a file in a public repository: owner/name, path, commit
  std::string path;
  std::string commit;
  InstanceOrigin origin = InstanceOrigin::bundled;
  SourcePos at;
};

// How a figure is known. A bare value (`devices = 16`) has no source and is unconfirmed;
// `{ value = 16, source = "trn2-arch", confirmed = true }` cites a source that states it.
struct FigureInfo {
  std::string source;  // an InstanceSource id, or ""
  bool confirmed = false;
  std::string note;
  SourcePos at;
};

template <class T>
struct Figure : FigureInfo {
  std::optional<T> value;  // nullopt: unknown
};

struct InstanceType {
  std::string name;
  InstanceOrigin origin = InstanceOrigin::bundled;
  SourcePos at;          // its [instances."name"] header
  std::string replaces;  // where the definition it shadows was ("" when none)

  Figure<std::string> target;  // compiler/--hw_backend target: trn1, trn2, trn3; "cpu" = no device
  Figure<std::string> device;  // the device name the driver reports (info/architecture/device_name)
  Figure<std::uint32_t> devices;
  Figure<std::uint32_t> cores_per_device;  // physical NeuronCores
  Figure<std::vector<std::uint32_t>> lnc;  // logical NeuronCore configs it accepts
  Figure<std::uint32_t> lnc_default;
  Figure<double> hbm_gib_per_device;
  Figure<double> bf16_tflops_per_device;  // peak dense BF16
  Figure<double> hbm_gb_per_s;            // device memory bandwidth, per device
  Figure<std::uint32_t> vcpus;
  Figure<double> host_memory_gib;
  Figure<std::uint32_t> efa_devices;
  Figure<double> efa_gbps;
  Figure<double> neuronlink_gb_per_s;        // device-to-device, per device
  Figure<std::uint32_t> ultraserver_nodes;   // servers in one NeuronLink domain (UltraServer)
  Figure<double> ultraserver_link_gb_per_s;  // between the servers of an UltraServer, per device
  // The all_reduce bus bandwidth across nodes the collective check expects, GiB/s (a site's own
  // figure; without it the check derives one from efa_gbps, docs/health.md).
  Figure<double> collective_busbw_gb_per_s;

  // The CPU reference backend: no Neuron device, the recipe gives cores_per_node.
  bool cpu() const { return target.value == "cpu"; }
  // devices x cores_per_device (0 for cpu or when unknown).
  std::uint32_t physical_cores() const;
  // Servers per UltraServer; 1 when the type is not part of one.
  std::uint32_t ultraserver_size() const;
  bool accepts_lnc(std::uint32_t lnc) const;
  // "1", "1 or 2"
  std::string lnc_choices() const;
};

// Calls f(key, figure) for every figure of a type, in the order of the file format.
template <class Type, class F>
requires std::same_as<std::remove_const_t<Type>, InstanceType>
void for_each_figure(Type& t, F&& f) {
  f("target", t.target);
  f("device", t.device);
  f("devices", t.devices);
  f("cores_per_device", t.cores_per_device);
  f("lnc", t.lnc);
  f("lnc_default", t.lnc_default);
  f("hbm_gib_per_device", t.hbm_gib_per_device);
  f("bf16_tflops_per_device", t.bf16_tflops_per_device);
  f("hbm_gb_per_s", t.hbm_gb_per_s);
  f("vcpus", t.vcpus);
  f("host_memory_gib", t.host_memory_gib);
  f("efa_devices", t.efa_devices);
  f("efa_gbps", t.efa_gbps);
  f("neuronlink_gb_per_s", t.neuronlink_gb_per_s);
  f("ultraserver_nodes", t.ultraserver_nodes);
  f("ultraserver_link_gb_per_s", t.ultraserver_link_gb_per_s);
  f("collective_busbw_gb_per_s", t.collective_busbw_gb_per_s);
}

// Every figure key, for messages and docs.
const std::vector<std::string>& instance_figure_keys();

// One instances file: its text, the name errors use, and what kind of file it is.
struct InstanceFile {
  std::string text;
  std::string name;
  InstanceOrigin origin = InstanceOrigin::site;
};

class InstanceTable {
 public:
  const std::vector<InstanceType>& types() const { return types_; }
  const std::vector<InstanceSource>& sources() const { return sources_; }
  const InstanceType* find(std::string_view name) const;
  const InstanceSource* source(std::string_view id) const;
  std::vector<std::string> names() const;
  // "site.toml:3:1: [instances."trn2.48xlarge"] replaces the bundled definition": one per
  // definition that shadows another.
  const std::vector<std::string>& notes() const { return notes_; }

  // Adds the [sources.*] and [instances.*] tables of one file; a type already known is replaced
  // whole (and noted). Refuses a bad definition with file:line:column and what to fix; other
  // top-level tables are refused unless `other_tables_allowed` (a recipe holds its own).
  Result<void> add(const InstanceFile& file, bool other_tables_allowed = false);

  // For the TOML reader (core/src/instance/instance_toml.cpp).
  void put(InstanceType type);
  void put(InstanceSource source);

 private:
  std::vector<InstanceType> types_;
  std::vector<InstanceSource> sources_;
  std::vector<std::string> notes_;
};

// What a recipe's [cluster] names, resolved against a table: the type, its lnc (the type's
// lnc_default for 0) and cores per node. Errors name the key at fault in Error::where
// ("cluster.instance", "cluster.lnc", "cluster.cores_per_node"), which the caller turns into a
// file position.
struct InstanceChoice {
  const InstanceType* type = nullptr;
  std::uint32_t lnc = 0;
  std::uint32_t cores_per_node = 0;
};
Result<InstanceChoice> choose_instance(const InstanceTable& table, std::string_view name, std::uint32_t lnc,
                                       std::optional<std::uint32_t> explicit_cores);

// The table compiled in from instances/instances.toml, parsed on first use. Its text is
// checked by the unit tests, so parsing it cannot fail in a build that passed them.
const InstanceTable& bundled_instances();
std::string_view bundled_instances_text();

// The bundled table with a site's file on top (none when `site` is nullopt).
Result<InstanceTable> load_instance_table(const std::optional<InstanceFile>& site);

// One bundled type by name, parsing only its own table: what the plugin does in every step,
// where parsing the whole file would cost more than everything else it does.
std::optional<InstanceType> bundled_instance(std::string_view name);

// Reads an instances file the plugin and the CLI trust: a regular file of at most 1 MiB that,
// like its directory, belongs to root or to the reading user and is writable by nobody else
// (a site file configures every user's jobs: a user must not be able to change it).
Result<InstanceFile> read_site_instances(const std::string& path);

// Cores (workers) per node at a logical NeuronCore config: physical / lnc. `cpu` has no fixed
// count: the recipe gives it (`explicit_cores`). Errors name the recipe key in `where`.
Result<std::uint32_t> cores_per_node(const InstanceType& instance, std::uint32_t lnc,
                                     std::optional<std::uint32_t> explicit_cores);

// Device memory per (logical) core in bytes: HBM of the node / cores per node; 0 when unknown.
std::uint64_t memory_per_core_bytes(const InstanceType& instance, std::uint32_t lnc);

// The figures a computation used that no public source confirms, as "devices = 16 (why)".
std::vector<std::string> unconfirmed_figures(const InstanceType& instance,
                                             const std::vector<std::string_view>& keys);

// `trnslurm instances --json`: every type with its figures and their sources.
nlohmann::json to_json(const InstanceTable& table);
// A figure's value as JSON (null when unknown) and as text ("16", "1, 2", "unknown").
nlohmann::json figure_json(const InstanceType& type, std::string_view key);
std::string figure_text(const InstanceType& type, std::string_view key);
const FigureInfo* figure_info(const InstanceType& type, std::string_view key);

namespace detail {
struct BundledInstanceText {
  std::string_view name;
  std::string_view text;
};
// Defined in the generated bundled_instances_data.cpp (cmake/BundleInstances.cmake).
std::span<const BundledInstanceText> bundled_instance_texts();
}  // namespace detail

}  // namespace trnslurm
