#include "site_config.hpp"

#include <cstdlib>
#include <filesystem>

#include "slurm_lookup.hpp"
#include "trnslurm/node/node_inputs.hpp"

namespace trnslurm::cli {

namespace fs = std::filesystem;

namespace {
std::string slurm_conf_path() {
  const char* env_conf = std::getenv("SLURM_CONF");
  return env_conf && *env_conf ? env_conf : "/etc/slurm/slurm.conf";
}
}  // namespace

SiteConfig load_site_config(const std::optional<std::string>& plugstack_override) {
  return read_site_config(slurm_conf_path(), plugstack_override);
}

Result<InstanceTable> site_instance_table(const SiteConfig& cfg) {
  if (!cfg.site) return std::unexpected(cfg.site.error());
  if (cfg.site->instances.empty()) return bundled_instances();
  auto path = expand_node_pattern(cfg.site->instances, node_name());
  if (!path) return std::unexpected(path.error());
  auto file = read_site_instances(*path);
  if (!file) return std::unexpected(file.error());
  return load_instance_table(*file);
}

std::optional<std::string> slurm_node_addr(const std::string& node) {
  // libslurm would complain on stderr without a slurm.conf: don't ask it then.
  if (!fs::exists(slurm_conf_path())) return std::nullopt;
  return slurm_lookup::node_addr(node);
}

}  // namespace trnslurm::cli
