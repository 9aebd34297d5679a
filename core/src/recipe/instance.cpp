#include "trnslurm/recipe/instance.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/util/suggest.hpp"

namespace trnslurm {

const std::vector<InstanceSpec>& known_instances() {
  // trn2: 128 physical cores (8 per chip), LNC=2 by default pairs them into 64 logical cores;
  // 1536 GiB of HBM per node. trn1/trn1n: 32 cores, 16 GiB each, LNC=1 only.
  static const std::vector<InstanceSpec> instances{
      {"trn1.32xlarge", "trn1", 32, 512, {1}, 1},
      {"trn1n.32xlarge", "trn1", 32, 512, {1}, 1},
      {"trn2.48xlarge", "trn2", 128, 1536, {1, 2}, 2},
      {"cpu", "cpu", 0, 0, {1}, 1},
  };
  return instances;
}

const InstanceSpec* find_instance(std::string_view name) {
  const auto& all = known_instances();
  const auto it = std::ranges::find(all, name, &InstanceSpec::name);
  return it == all.end() ? nullptr : &*it;
}

Result<std::uint32_t> cores_per_node(const InstanceSpec& instance, std::uint32_t lnc,
                                     std::optional<std::uint32_t> explicit_cores) {
  if (instance.physical_cores == 0) {
    if (!explicit_cores || *explicit_cores == 0)
      return fail(fmt::format("instance '{}' needs cores_per_node", instance.name), "cluster.cores_per_node",
                  "set cluster.cores_per_node to the number of workers per node");
    return *explicit_cores;
  }
  if (std::ranges::find(instance.lnc_values, lnc) == instance.lnc_values.end())
    return fail(fmt::format("lnc = {} is not valid on {}", lnc, instance.name), "cluster.lnc",
                instance.lnc_values.size() == 1 ? fmt::format("{} supports only lnc = 1", instance.name)
                                                : "use lnc = 1 or lnc = 2");
  const std::uint32_t cores = instance.physical_cores / lnc;
  if (explicit_cores && *explicit_cores != cores)
    return fail(fmt::format("cores_per_node = {} but {} at lnc = {} has {} cores", *explicit_cores,
                            instance.name, lnc, cores),
                "cluster.cores_per_node", "remove cores_per_node: it follows from the instance and lnc");
  return cores;
}

Result<InstanceChoice> choose_instance(std::string_view name, std::uint32_t lnc,
                                       std::optional<std::uint32_t> explicit_cores) {
  const auto* instance = find_instance(name);
  if (instance == nullptr) {
    std::vector<std::string> names;
    for (const auto& i : known_instances()) names.emplace_back(i.name);
    auto close = closest_match(name, names);
    return fail(fmt::format("unknown instance type '{}'", name), "cluster.instance",
                close ? fmt::format("did you mean '{}'?", *close)
                      : fmt::format("use one of: {}", fmt::join(names, ", ")));
  }
  InstanceChoice choice{instance, lnc == 0 ? instance->default_lnc : lnc, 0};
  auto cores = cores_per_node(*instance, choice.lnc, explicit_cores);
  if (!cores) return std::unexpected(cores.error());
  choice.cores_per_node = *cores;
  return choice;
}

std::uint64_t memory_per_core_bytes(const InstanceSpec& instance, std::uint32_t lnc) {
  if (instance.physical_cores == 0 || lnc == 0) return 0;
  const std::uint64_t cores = instance.physical_cores / lnc;
  return instance.device_memory_gib * (std::uint64_t{1} << 30) / cores;
}

}  // namespace trnslurm
