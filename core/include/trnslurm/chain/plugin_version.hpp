#pragma once
// Whether Slurm will load the plugin: Slurm loads a plugin only when the plugin_version it was
// built with has the running Slurm's major and minor release (22.05 loads 22.05.x, nothing else).
// `trnslurm doctor` asks this of the plugin its plugstack.conf names.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/health/finding.hpp"

namespace trnslurm {

// "22.05" of a plugin_version (major << 16 | minor << 8 | micro), and of "22.05.8".
std::string slurm_major_minor(std::uint32_t plugin_version);
std::string slurm_major_minor(std::string_view dotted);

// The rule on values: the plugin's plugin_version against what slurmctld runs (an error when it
// could not be asked: a warning, not a failure) and against the Slurm this trnslurm was built
// against (`built_against`, a warning when they differ). Findings named "version".
std::vector<health::Finding> plugin_version_findings(std::uint32_t plugin_version,
                                                     const Result<std::string>& controller,
                                                     std::string_view built_against);

// The rule on the plugin file and the cluster: reads its plugin_version symbol (a FAIL named
// "plugin" when it cannot, and then Slurm is not asked), then asks `slurm` for slurmctld's version.
std::vector<health::Finding> check_plugin_version(const std::filesystem::path& plugin, SlurmClient& slurm,
                                                  std::string_view built_against);

}  // namespace trnslurm
