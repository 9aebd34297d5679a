#pragma once
// One short value of a sysfs (or /proc) file: what the topology and the health checks read.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace trnslurm {

// The first line of `file`, trailing blanks cut; nullopt when it is missing, unreadable or empty.
// Reads at most a page with POSIX calls, not iostreams: the plugin does this in every step.
std::optional<std::string> read_sysfs_line(const std::filesystem::path& file);
// The same for `file` relative to the open directory `dir` (openat(2)): the topology walks one
// tree of many small files, and resolving each full path again cost most of its time.
std::optional<std::string> read_sysfs_line_at(int dir, const char* file);

// That line as a whole unsigned number; nullopt when it is missing or not one (never zero).
std::optional<std::uint64_t> read_sysfs_number(const std::filesystem::path& file);

}  // namespace trnslurm
