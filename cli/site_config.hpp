#pragma once
// What `trnslurm env` and `trnslurm doctor` need from the node's Slurm setup: the site's
// configuration as the core reads it (node/site_config.hpp) and Slurm's NodeAddr for a node
// (through libslurm, like the plugin).
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/instance/instance.hpp"
#include "trnslurm/node/site_config.hpp"

namespace trnslurm::cli {

// node/site_config.hpp's read_site_config of $SLURM_CONF (else /etc/slurm/slurm.conf).
SiteConfig load_site_config(const std::optional<std::string>& plugstack_override);

// The site's instance types as plan and the plugin see them: the bundled table with the file
// named by plugstack instances= (%n = this host) on top, when there is one.
Result<InstanceTable> site_instance_table(const SiteConfig& cfg);

// Slurm's NodeAddr for a node name (slurm/slurm_lookup.hpp), when slurm.conf is readable here:
// libslurm would complain on stderr without one.
std::optional<std::string> slurm_node_addr(const std::string& node);

}  // namespace trnslurm::cli
