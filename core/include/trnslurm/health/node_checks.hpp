#pragma once
// Every pre-flight check of one node, run in one call: what `trnslurm doctor`, the per-node
// step of `doctor --cluster` and the train stage's pre-flight share (docs/health.md).

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/health/finding.hpp"
#include "trnslurm/node/efa.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::health {

// The checks by name, in the order they run. "collective" is not a node check: the front ends run
// it across the nodes after these (health/collective.hpp).
inline constexpr std::array<std::string_view, 9> check_names{
    "topology", "errors", "cores", "efa", "libfabric", "nofile", "disk", "cache", "collective"};

// A comma-separated list of check names (every name known, did-you-mean otherwise); `where`
// names the option or recipe key for the error.
Result<std::vector<std::string>> parse_checks(std::string_view list, const std::string& where);

struct NodeCheckInputs {
  std::filesystem::path root = "/";  // sysfs, /dev and /proc are read under it (plugstack root=)
  std::string site_instances;        // the site's instances file ("" = the bundled table only)
  std::optional<EfaProbe> efa;       // libfabric's answer: the slurmd's saved probe, or one made now
  std::uint64_t open_files_soft = 0;
  std::uint64_t open_files_hard = 0;
  std::vector<pid_t> own_pids;                          // the job's processes: theirs may hold devices
  std::optional<std::filesystem::path> checkpoint_dir;  // no disk check without it
  std::uint64_t checkpoint_bytes = 0;                   // one checkpoint (resource_checks.hpp)
  std::optional<std::filesystem::path> compile_cache;   // no cache check without it
  std::vector<std::string> checks;                      // names to run; empty = every node check
};

// The findings of every check asked for, in check_names order. Fails only when the site's
// instances file cannot be read (every step on the node would fail too).
Result<std::vector<Finding>> run_node_checks(const NodeCheckInputs& in);

}  // namespace trnslurm::health
