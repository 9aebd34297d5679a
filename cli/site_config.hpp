#pragma once
// What `trnslurm env` and `trnslurm doctor` need from the node's Slurm setup: the trnslurm line
// of plugstack.conf (its arguments are the site settings the plugin runs with) and Slurm's
// NodeAddr for a node (through libslurm, like the plugin).
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/node/plugstack_conf.hpp"
#include "trnslurm/node/settings.hpp"

namespace trnslurm::cli {

struct SiteConfig {
  std::string slurm_conf;  // $SLURM_CONF or /etc/slurm/slurm.conf
  bool slurm_conf_found = false;
  std::string plugstack;  // PlugStackConfig, or the file given with --plugstack
  bool plugstack_found = false;
  std::vector<std::string> files_read;         // plugstack.conf and what it includes
  std::optional<PlugstackLine> line;           // the trnslurm line, when there is one
  Result<SiteSettings> site = SiteSettings{};  // its arguments, parsed as strictly as the plugin does
};

SiteConfig load_site_config(const std::optional<std::string>& plugstack_override);

// The site's instance types as plan and the plugin see them: the bundled table with the file
// named by plugstack instances= (%n = this host) on top, when there is one.
Result<InstanceTable> site_instance_table(const SiteConfig& cfg);

// Slurm's NodeAddr for a node name (slurm/slurm_lookup.hpp), when slurm.conf is readable here:
// libslurm would complain on stderr without one.
std::optional<std::string> slurm_node_addr(const std::string& node);

}  // namespace trnslurm::cli
