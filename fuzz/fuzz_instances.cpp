// The instances format (a site's file, read in every step): any text, then what plan and the
// plugin do with the types it defines.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/node/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trnslurm;
  const InstanceFile file{std::string(fuzz::as_text(data, size)), "fuzz.toml", InstanceOrigin::site};
  auto table = load_instance_table(file);
  if (!table) {
    (void)to_string(table.error());
    return 0;
  }
  (void)to_json(*table).dump();
  for (const auto& type : table->types()) {
    for (const std::uint32_t lnc : {1U, 2U, 4U}) {
      (void)cores_per_node(type, lnc, std::nullopt);
      (void)memory_per_core_bytes(type, lnc);
    }
    (void)unconfirmed_figures(type, {"devices", "lnc"});
    Topology node;
    node.instance_type = type.name;
    node.devices.resize(2);
    if (auto found = node_instance(node, file)) (void)physical_cores(node, *found);
  }
  return 0;
}
