#pragma once
// Whole files in and out: the one way the core and the CLI read a file into memory and replace
// one atomically.

#include <sys/types.h>
#include <cstddef>
#include <expected>

#include <filesystem>
#include <string>
#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

enum class ReadFailure {
  unreadable,   // missing, no permission, an I/O error
  not_regular,  // a FIFO, a device, a socket, a directory: refused before any read
  too_large,    // more than max_size bytes: not read into memory
};

// Every file trnslurm and the plugin read goes through here (docs/security.md, "Files"): it is
// opened without blocking (a FIFO's open waits for a writer), refused unless it is a regular
// file, and refused when larger than `max_size` (by its size, then by what was read: /proc
// files say 0), so a FIFO, /dev/zero or a dataset passed by mistake is refused at once. The cap
// is the caller's: what the file holds, with room to spare (64 MiB when it does not say).
inline constexpr std::size_t default_read_cap = std::size_t{64} << 20;
std::expected<std::string, ReadFailure> read_file(const std::filesystem::path& path,
                                                  std::size_t max_size = default_read_cap);

// read_file, with a refusal as an Error: `what` (e.g. "the recipe") is refused with the path,
// the kind of file it is, the cap, or errno's text; `hint` says how to fix an unreadable file.
Result<std::string> read_file_or_fail(const std::filesystem::path& path, std::size_t max_size,
                                      std::string_view what, std::string_view hint = {});

// "a FIFO", "a character device", "a directory"... for a refusal's message.
std::string file_kind(mode_t mode);

enum class Replace {
  always,  // rename over whatever is there
  never,   // "already exists" when the target exists, even when it appears during the write
};

// Writes `content` beside `path` (a temporary file in the same directory), then renames it into
// place (or links it, with Replace::never), so a reader or a failure never sees half a file.
// What `path` names (through a symbolic link) must be a regular file when it exists: a device,
// a FIFO or a directory is refused, never replaced.
// Mode 0644. No fsync: the rename makes the write atomic for readers; surviving a power cut is
// not worth a disk flush per file.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view content,
                               Replace replace = Replace::always);

// Creates `path`, which must not exist, with `content` and `mode`, in one creation: no temporary
// file, no rename. Only for a file no reader looks at before something written after it (atomically)
// says it is complete, e.g. a run directory's scripts, which the manifest follows: on a shared file
// system every metadata operation is a round trip (docs/scale.md). A failure removes what it created.
Result<void> write_new_file(const std::filesystem::path& path, std::string_view content, mode_t mode);

// Appends `line` (newline included) to `path`, created 0644 if need be, in one write: appends of
// short lines from several processes never interleave within a line. `what` names the file in
// errors ("the journal").
Result<void> append_line(const std::filesystem::path& path, std::string_view line, std::string_view what);

}  // namespace trnslurm
