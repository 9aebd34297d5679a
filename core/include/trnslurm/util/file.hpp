#pragma once
// Whole files in and out: the one way the core and the CLI read a file into memory and replace
// one atomically.

#include <sys/types.h>
#include <cstddef>
#include <expected>

#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

enum class ReadFailure {
  unreadable,  // missing, a directory, no permission, an I/O error
  too_large,   // more than max_size bytes: not read into memory
};

// The whole file. With max_size, a larger file is refused after reading at most max_size + 1
// bytes, so `-r /dev/zero` or a dataset passed by mistake never fills memory.
std::expected<std::string, ReadFailure> read_file(
    const std::filesystem::path& path, std::size_t max_size = std::numeric_limits<std::size_t>::max());

enum class Replace {
  always,  // rename over whatever is there
  never,   // "already exists" when the target exists, even when it appears during the write
};

// Writes `content` beside `path` (a temporary file in the same directory), then renames it into
// place (or links it, with Replace::never), so a reader or a failure never sees half a file.
// Mode 0644. No fsync: the rename makes the write atomic for readers; surviving a power cut is
// not worth a disk flush per file.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view content,
                               Replace replace = Replace::always);

// Creates `path`, which must not exist, with `content` and `mode`, in one creation: no temporary
// file, no rename. Only for a file no reader looks at before something written after it (atomically)
// says it is complete, e.g. a run directory's scripts, which the manifest follows: on a shared file
// system every metadata operation is a round trip (docs/scale.md). A failure removes what it created.
Result<void> write_new_file(const std::filesystem::path& path, std::string_view content, mode_t mode);

}  // namespace trnslurm
