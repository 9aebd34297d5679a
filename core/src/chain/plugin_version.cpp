#include "trnslurm/chain/plugin_version.hpp"

#include <fmt/format.h>

#include "trnslurm/util/elf_symbol.hpp"

namespace trnslurm {

std::string slurm_major_minor(std::uint32_t plugin_version) {
  return fmt::format("{}.{:02}", (plugin_version >> 16) & 0xff, (plugin_version >> 8) & 0xff);
}

std::string slurm_major_minor(std::string_view dotted) {
  const auto second = dotted.find('.', dotted.find('.') + 1);
  return std::string(second == std::string_view::npos ? dotted : dotted.substr(0, second));
}

std::vector<health::Finding> plugin_version_findings(std::uint32_t plugin_version,
                                                     const Result<std::string>& controller,
                                                     std::string_view built_against) {
  using health::Status;
  std::vector<health::Finding> out;
  const std::string built_for = slurm_major_minor(plugin_version);
  if (!controller) {
    out.push_back({"version", Status::warn,
                   fmt::format("plugin built for Slurm {}; slurmctld not reachable to compare", built_for)});
  } else if (slurm_major_minor(*controller) != built_for) {
    out.push_back({"version", Status::fail,
                   fmt::format("plugin built for Slurm {}, slurmctld runs {}: Slurm refuses to load it "
                               "(rebuild against this Slurm)",
                               built_for, *controller)});
  } else {
    out.push_back({"version", Status::ok,
                   fmt::format("plugin built for Slurm {}, slurmctld runs {}", built_for, *controller)});
  }
  if (slurm_major_minor(built_against) != built_for)
    out.push_back({"version", Status::warn,
                   fmt::format("this trnslurm was built against Slurm {}, the plugin for {}", built_against,
                               built_for)});
  return out;
}

std::vector<health::Finding> check_plugin_version(const std::filesystem::path& plugin, SlurmClient& slurm,
                                                  std::string_view built_against) {
  const auto version = read_u32_symbol(plugin, "plugin_version");
  if (!version) return {{"plugin", health::Status::fail, to_string(version.error())}};
  return plugin_version_findings(*version, slurm.controller_version(), built_against);
}

}  // namespace trnslurm
