#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnslurm {

// The trnslurm line of a plugstack.conf: `required|optional <path> [args...]`.
struct PlugstackLine {
  bool required = false;
  std::string path;
  std::vector<std::string> args;
  std::string file;  // where it was found, for messages
  std::size_t line = 0;
};

struct PlugstackScan {
  std::optional<PlugstackLine> trnslurm;  // the first line whose plugin is trnslurm.so
  std::vector<std::string> includes;      // `include <glob>` lines, to follow
};

// Scans one plugstack.conf text (comments, blank lines, include lines, plugin lines).
PlugstackScan scan_plugstack(std::string_view text, std::string_view file);

// The value of `Key=value` in slurm.conf text (keys are case-insensitive; the last one wins).
std::optional<std::string> slurm_conf_value(std::string_view text, std::string_view key);

}  // namespace trnslurm
