#include "trnslurm/progress/log_lines.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "trnslurm/util/fd.hpp"

namespace trnslurm {
namespace {

std::unexpected<Error> io_error(const std::filesystem::path& path, std::string_view what) {
  return fail(fmt::format("cannot {}: {}", what, std::strerror(errno)), path.string());
}

// pread until `buf` is full or the end; bytes read.
Result<std::size_t> read_at(int fd, char* buf, std::size_t n, std::uint64_t at,
                            const std::filesystem::path& path) {
  std::size_t got = 0;
  while (got < n) {
    const auto r = ::pread(fd, buf + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return io_error(path, "read the log");
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

}  // namespace

Result<LogRead> read_lines(const std::filesystem::path& path, std::uint64_t from,
                           const std::function<void(std::string_view)>& line, LogReadLimits limits) {
  LogRead out;
  out.offset = from;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENOENT) return out;
    return io_error(path, "open the log");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_error(path, "stat the log");
  if (!S_ISREG(st.st_mode)) return fail("not a regular file", path.string());
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.file_id = static_cast<std::uint64_t>(st.st_ino);
  out.modified = static_cast<std::int64_t>(st.st_mtim.tv_sec);
  if (from > out.size) from = out.offset = 0;  // truncated, or another file: from the start
  const std::size_t chunk = std::max<std::size_t>(limits.chunk, 1);
  std::vector<char> buf(chunk);
  std::string pending;      // the start of a line that runs across chunks
  bool skipping = false;    // inside a line longer than max_line
  std::uint64_t at = from;  // the file position of buf[0]
  std::uint64_t line_start = from;
  // Only what was there at fstat: a writer appending meanwhile is read next time.
  while (at < out.size) {
    auto got = read_at(fd.get(), buf.data(), std::min<std::uint64_t>(chunk, out.size - at), at, path);
    if (!got) return std::unexpected(got.error());
    if (*got == 0) break;
    const std::string_view data(buf.data(), *got);
    std::size_t p = 0;
    for (;;) {
      const auto nl = data.find('\n', p);
      const auto piece = data.substr(p, nl == std::string_view::npos ? std::string_view::npos : nl - p);
      if (!skipping && pending.size() + piece.size() > limits.max_line) {
        skipping = true;
        pending.clear();
      }
      if (!skipping && nl == std::string_view::npos) pending.append(piece);
      if (nl == std::string_view::npos) break;
      if (skipping) {
        ++out.long_lines;
      } else if (pending.empty()) {
        line(piece);
        ++out.lines;
      } else {
        pending.append(piece);
        line(pending);
        ++out.lines;
        pending.clear();
      }
      skipping = false;
      line_start = at + nl + 1;
      p = nl + 1;
    }
    at += *got;
  }
  if (limits.final && !skipping && !pending.empty()) {
    line(pending);
    ++out.lines;
    line_start = out.size;
  } else if (limits.final && skipping) {
    ++out.long_lines;
    line_start = out.size;
  }
  out.offset = line_start;
  return out;
}

Result<std::uint64_t> tail_start(const std::filesystem::path& path, std::uint64_t bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENOENT) return 0;
    return io_error(path, "open the log");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_error(path, "stat the log");
  if (!S_ISREG(st.st_mode)) return fail("not a regular file", path.string());
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size <= bytes) return 0;
  // The line that was cut at the start of the window is not read: start after its newline.
  std::uint64_t at = size - bytes;
  std::vector<char> buf(std::size_t{64} * 1024);
  while (at < size) {
    auto got = read_at(fd.get(), buf.data(), std::min<std::uint64_t>(buf.size(), size - at), at - 1, path);
    if (!got) return std::unexpected(got.error());
    if (*got == 0) break;
    const std::string_view data(buf.data(), *got);
    if (const auto nl = data.find('\n'); nl != std::string_view::npos) return at + nl;
    at += *got;
  }
  return size;
}

}  // namespace trnslurm
