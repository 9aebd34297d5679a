#pragma once
// A log read line by line from a byte offset, in bounded chunks: a log of gigabytes costs what it
// gained since the last read, and a line of any length costs at most `max_line` bytes of memory.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

struct LogRead {
  std::uint64_t offset = 0;      // where the next read starts: after the last complete line
  std::uint64_t size = 0;        // the file's size when read
  std::uint64_t file_id = 0;     // its inode: another file at the same path starts over
  std::int64_t modified = 0;     // its mtime, Unix seconds
  std::uint64_t lines = 0;       // complete lines handed on
  std::uint64_t long_lines = 0;  // lines longer than max_line, skipped whole
};

struct LogReadLimits {
  std::size_t max_line = std::size_t{64} * 1024;  // a progress line is a few hundred bytes
  std::size_t chunk = 1 << 20;
  bool final = false;  // the writer is gone: a last line without its newline counts too
};

// Hands each complete line after `from` (its newline removed) to `line`. A missing file is no
// error (nothing written yet): the result says size 0.
Result<LogRead> read_lines(const std::filesystem::path& path, std::uint64_t from,
                           const std::function<void(std::string_view)>& line, LogReadLimits limits = {});

// Where to start reading a log that was never read, to see only its last `bytes`: the start of
// the first whole line in them (0 for a shorter file).
Result<std::uint64_t> tail_start(const std::filesystem::path& path, std::uint64_t bytes);

}  // namespace trnslurm
