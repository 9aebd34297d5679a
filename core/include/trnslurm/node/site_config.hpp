#pragma once
// What a node's Slurm setup says of the plugin: slurm.conf's PlugStackConfig, the plugstack.conf
// it names and the files that includes, the trnslurm line among them and its arguments (the site
// settings the plugin runs with). `trnslurm env`, `doctor`, `instances` and the pre-flight read it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/node/plugstack_conf.hpp"
#include "trnslurm/node/settings.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

struct SiteConfig {
  std::string slurm_conf;  // $SLURM_CONF or /etc/slurm/slurm.conf
  bool slurm_conf_found = false;
  std::string plugstack;  // PlugStackConfig, or the file given with --plugstack
  bool plugstack_found = false;
  std::vector<std::string> files_read;         // plugstack.conf and what it includes, each once
  std::optional<PlugstackLine> line;           // the trnslurm line, when there is one
  Result<SiteSettings> site = SiteSettings{};  // its arguments, parsed as strictly as the plugin does
};

// Reads `slurm_conf`, then the plugstack.conf it names (PlugStackConfig, else plugstack.conf beside
// it; `plugstack_override` instead when given) and the files its `include` lines match, as Slurm
// does: a relative pattern is relative to the including file's directory, a pattern that matches
// nothing is no error. A file already read is not read again (an include cycle ends there), and
// includes are followed four levels deep at most. A missing file is a setting (no Slurm here, no
// plugstack.conf); a FIFO, a device or an oversized file in its place makes `site` an error that
// names it.
SiteConfig read_site_config(const std::filesystem::path& slurm_conf,
                            const std::optional<std::string>& plugstack_override);

}  // namespace trnslurm
