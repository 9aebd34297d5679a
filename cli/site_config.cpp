#include "site_config.hpp"

#include <glob.h>

#include <cstdlib>
#include <filesystem>

#include "slurm_lookup.hpp"
#include "trnslurm/node/node_inputs.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {

namespace fs = std::filesystem;

SiteConfig load_site_config(const std::optional<std::string>& plugstack_override) {
  SiteConfig cfg;
  const char* env_conf = std::getenv("SLURM_CONF");
  cfg.slurm_conf = env_conf && *env_conf ? env_conf : "/etc/slurm/slurm.conf";
  // slurm.conf and plugstack.conf: a few KiB each, a large site's a few hundred.
  constexpr std::size_t max_conf_size = std::size_t{16} << 20;
  // A missing file is a setting (no Slurm here, no plugstack.conf); a FIFO, a device or an
  // oversized file in its place is refused, with its path, before anything else is read.
  std::optional<Error> refused;
  const auto read_conf = [&](const std::string& file, std::string_view what) {
    auto text = read_file(file, max_conf_size);
    if (!text && text.error() != ReadFailure::unreadable && !refused) {
      const auto err = read_file_or_fail(file, max_conf_size, what);
      refused = err ? Error{"changed while it was read", file, ""} : err.error();
    }
    return text;
  };
  const auto conf_text = read_conf(cfg.slurm_conf, "slurm.conf");
  cfg.slurm_conf_found = conf_text.has_value();
  if (plugstack_override) {
    cfg.plugstack = *plugstack_override;
  } else {
    const auto configured = conf_text ? slurm_conf_value(*conf_text, "PlugStackConfig") : std::nullopt;
    cfg.plugstack =
        configured ? *configured : (fs::path(cfg.slurm_conf).parent_path() / "plugstack.conf").string();
  }

  std::vector<std::string> pending{cfg.plugstack};
  // Follow `include` lines, a few levels deep at most (Slurm itself allows nesting).
  for (int depth = 0; depth < 4 && !pending.empty() && !cfg.line; ++depth) {
    std::vector<std::string> next;
    for (const auto& file : pending) {
      const auto text = read_conf(file, "the plugstack file");
      if (!text) continue;
      if (file == cfg.plugstack) cfg.plugstack_found = true;
      cfg.files_read.push_back(file);
      auto scan = scan_plugstack(*text, file);
      if (scan.trnslurm && !cfg.line) cfg.line = std::move(scan.trnslurm);
      for (const auto& pattern : scan.includes) {
        glob_t g{};
        if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
          for (std::size_t i = 0; i < g.gl_pathc; ++i) next.emplace_back(g.gl_pathv[i]);
        }
        globfree(&g);
      }
    }
    pending = std::move(next);
  }
  if (refused) {
    cfg.site = std::unexpected(*refused);
  } else if (cfg.line) {
    cfg.site = parse_plugstack_args(cfg.line->args);
  }
  return cfg;
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
  const char* env_conf = std::getenv("SLURM_CONF");
  if (!fs::exists(env_conf && *env_conf ? env_conf : "/etc/slurm/slurm.conf")) return std::nullopt;
  return slurm_lookup::node_addr(node);
}

}  // namespace trnslurm::cli
