#include "trnslurm/node/site_config.hpp"

#include <glob.h>

#include <algorithm>

#include "trnslurm/util/file.hpp"

namespace trnslurm {

namespace fs = std::filesystem;

namespace {

// The files an include pattern names, resolved as Slurm's plugstack loader resolves them.
std::vector<std::string> matches(const std::string& pattern, const std::string& including_file) {
  const std::string full =
      pattern.starts_with('/') ? pattern : (fs::path(including_file).parent_path() / pattern).string();
  std::vector<std::string> out;
  glob_t g{};
  if (glob(full.c_str(), 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

// The same file however it was named (a cycle through "../x.conf" and "/etc/slurm/x.conf").
std::string identity(const std::string& file) {
  std::error_code ec;
  auto canonical = fs::weakly_canonical(file, ec);
  return ec ? fs::path(file).lexically_normal().string() : canonical.string();
}

}  // namespace

SiteConfig read_site_config(const fs::path& slurm_conf,
                            const std::optional<std::string>& plugstack_override) {
  SiteConfig cfg;
  cfg.slurm_conf = slurm_conf.string();
  // slurm.conf and plugstack.conf: a few KiB each, a large site's a few hundred.
  constexpr std::size_t max_conf_size = std::size_t{16} << 20;
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
    cfg.plugstack = configured ? *configured : (slurm_conf.parent_path() / "plugstack.conf").string();
  }

  std::vector<std::string> seen;
  std::vector<std::string> pending{cfg.plugstack};
  // Slurm itself allows any nesting; four levels is more than any site uses.
  for (int depth = 0; depth < 4 && !pending.empty() && !cfg.line; ++depth) {
    std::vector<std::string> next;
    for (const auto& file : pending) {
      auto id = identity(file);
      if (std::ranges::find(seen, id) != seen.end()) continue;
      seen.push_back(std::move(id));
      const auto text = read_conf(file, "the plugstack file");
      if (!text) continue;
      if (file == cfg.plugstack) cfg.plugstack_found = true;
      cfg.files_read.push_back(file);
      auto scan = scan_plugstack(*text, file);
      if (scan.trnslurm && !cfg.line) cfg.line = std::move(scan.trnslurm);
      for (const auto& pattern : scan.includes)
        std::ranges::move(matches(pattern, file), std::back_inserter(next));
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

}  // namespace trnslurm
