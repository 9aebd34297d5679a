#include "node_health.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace trnslurm::cli {

Result<health::NodeCheckInputs> node_check_inputs(const SiteSettings& site, const std::string& node,
                                                  const NodeHealthOptions& options) {
  health::NodeCheckInputs in;
  if (options.checks) {
    auto checks = health::parse_checks(*options.checks, "--checks");
    if (!checks) return std::unexpected(checks.error());
    in.checks = std::move(*checks);
  }
  auto root = expand_node_pattern(site.root, node);
  if (!root) return std::unexpected(root.error());
  in.root = *root;
  auto instances = expand_node_pattern(site.instances, node);
  if (!instances) return std::unexpected(instances.error());
  in.site_instances = *instances;
  if (auto dir = expand_node_pattern(site.state_dir, node)) {
    if (auto saved = read_efa_state(*dir)) in.efa = *saved;
  }
  const auto wants = [&](std::string_view name) {
    return in.checks.empty() || std::ranges::find(in.checks, name) != in.checks.end();
  };
  if (!in.efa && options.probe && wants("libfabric")) in.efa = probe_efa();
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    in.open_files_soft = nofile.rlim_cur;
    in.open_files_hard = nofile.rlim_max;
  }
  in.own_pids = {getpid(), getppid()};
  if (options.checkpoint_dir) in.checkpoint_dir = *options.checkpoint_dir;
  in.checkpoint_bytes = options.checkpoint_bytes;
  // What the steps get: the plugin's NEURON_COMPILE_CACHE_URL when this runs in one (unless it
  // names S3), else the site's cache= setting.
  const char* url = std::getenv("NEURON_COMPILE_CACHE_URL");
  if (url && *url && std::string_view(url).find("://") == std::string_view::npos)
    in.compile_cache = url;
  else
    in.compile_cache = site.defaults.cache;
  return in;
}

void add_node_health_options(CLI::App& sub, NodeHealthOptions& o) {
  sub.add_option("--checks", o.checks,
                 "Only these checks, comma-separated: topology, errors, cores, efa, libfabric, nofile, disk, "
                 "cache, collective (docs/health.md)");
  sub.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "Check the free space here (the recipe's checkpoint_dir)");
  sub.add_option("--checkpoint-bytes", o.checkpoint_bytes,
                 "Bytes one checkpoint needs there (default: only report)");
}

}  // namespace trnslurm::cli
