#pragma once
// What `trnslurm env` and `trnslurm doctor` need from the node's Slurm setup: the trnslurm line
// of plugstack.conf (its arguments are the site settings the plugin runs with), the first host
// of a node list and Slurm's NodeAddr for a node (both through libslurm, like the plugin).
#include <optional>
#include <string>
#include <vector>

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

// libslurm's hostlist parser: the first host of "n[1-4],x" (nullopt when the list is bad/empty).
std::optional<std::string> first_host(const std::string& nodelist);

// Slurm's NodeAddr for a node name, when slurm.conf is readable here.
std::optional<std::string> slurm_node_addr(const std::string& node);

// This host's short name: what %n stands for on this node.
std::string short_hostname();

// The whole file, or nullopt.
std::optional<std::string> read_text(const std::string& path);

}  // namespace trnslurm::cli
