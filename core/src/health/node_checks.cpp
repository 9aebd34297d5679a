#include "trnslurm/health/node_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/health/core_holders.hpp"
#include "trnslurm/health/device_checks.hpp"
#include "trnslurm/health/efa_checks.hpp"
#include "trnslurm/health/resource_checks.hpp"
#include "trnslurm/node/topology.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm::health {

Result<std::vector<std::string>> parse_checks(std::string_view list, const std::string& where) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    auto name = list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) {
      if (std::ranges::find(check_names, name) == check_names.end()) {
        const std::vector<std::string> known(check_names.begin(), check_names.end());
        const auto close = closest_match(name, known);
        return fail(
            fmt::format("unknown check '{}'{}", name, close ? " (did you mean '" + *close + "'?)" : ""),
            where, fmt::format("the checks are {}", fmt::join(check_names, ", ")));
      }
      if (std::ranges::find(out, name) == out.end()) out.emplace_back(name);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (out.empty())
    return fail("no check named", where, fmt::format("name some of {}", fmt::join(check_names, ", ")));
  return out;
}

Result<std::vector<Finding>> run_node_checks(const NodeCheckInputs& in) {
  const auto wanted = [&](std::string_view name) {
    return in.checks.empty() ? name != "collective" : std::ranges::find(in.checks, name) != in.checks.end();
  };
  std::vector<Finding> out;
  const auto add = [&](std::vector<Finding> more) { out.insert(out.end(), more.begin(), more.end()); };
  const auto topology = read_topology(in.root);
  const auto instance = read_node_instance(topology, in.site_instances);
  if (!instance) return std::unexpected(instance.error());
  if (wanted("topology")) add(check_devices(topology, *instance));
  if (wanted("errors")) add(check_error_counters(in.root, topology));
  if (wanted("cores")) add(check_core_holders(in.root, in.own_pids));
  if (wanted("efa")) add(check_efa_devices(in.root, *instance));
  if (wanted("libfabric")) add(check_libfabric(in.efa, *instance));
  if (wanted("nofile"))
    add(check_open_files(in.open_files_soft, in.open_files_hard, !topology.devices.empty()));
  if (wanted("disk") && in.checkpoint_dir) add(check_free_space(*in.checkpoint_dir, in.checkpoint_bytes));
  if (wanted("cache") && in.compile_cache) add(check_cache_dir(*in.compile_cache));
  return out;
}

}  // namespace trnslurm::health
