#include "trnslurm/util/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace trnslurm {

namespace fs = std::filesystem;

namespace {
// All of `content`, through short writes and signals; false with errno set.
bool write_all(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}
}  // namespace

namespace {

struct ReadOutcome {
  std::expected<std::string, ReadFailure> text;
  int err = 0;      // errno, when unreadable
  mode_t mode = 0;  // the file's type, when not regular
};

ReadOutcome read_checked(const fs::path& path, std::size_t max_size) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer, forever; on a regular file it
  // changes nothing. O_NOCTTY: a terminal never becomes the controlling one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return {std::unexpected(ReadFailure::unreadable), errno};
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {std::unexpected(ReadFailure::unreadable), errno};
  if (!S_ISREG(st.st_mode)) return {std::unexpected(ReadFailure::not_regular), 0, st.st_mode};
  if (st.st_size < 0 || static_cast<std::uintmax_t>(st.st_size) > max_size)
    return {std::unexpected(ReadFailure::too_large)};
  // Read in chunks: allocating (and zeroing) a cap up front cost every command ~0.4 ms. A file
  // that grows while it is read (or says 0, as /proc's do) is still cut at the cap.
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  std::array<char, 16384> chunk{};
  while (text.size() <= max_size) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {std::unexpected(ReadFailure::unreadable), errno};
    if (n == 0) break;
    text.append(chunk.data(), static_cast<std::size_t>(n));
  }
  if (text.size() > max_size) return {std::unexpected(ReadFailure::too_large)};
  return {std::move(text)};
}

std::string format_size(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

std::expected<std::string, ReadFailure> read_file(const fs::path& path, std::size_t max_size) {
  return read_checked(path, max_size).text;
}

Result<std::string> read_file_or_fail(const fs::path& path, std::size_t max_size, std::string_view what,
                                      std::string_view hint) {
  auto r = read_checked(path, max_size);
  if (r.text) return std::move(*r.text);
  const auto where = path.string();
  switch (r.text.error()) {
    case ReadFailure::not_regular:
      return fail(fmt::format("{} is {}, not a regular file: not read", what, file_kind(r.mode)), where,
                  "give the path of the file itself");
    case ReadFailure::too_large:
      return fail(fmt::format("{} is larger than {}: not read", what, format_size(max_size)), where,
                  "check the path: this is not the file meant");
    case ReadFailure::unreadable:
      break;
  }
  return fail(fmt::format("cannot read {}: {}", what, std::strerror(r.err)), where, std::string(hint));
}

Result<void> write_file_atomic(const fs::path& path, std::string_view content, Replace replace) {
  // Only a regular file is ever replaced: a rename over a device node, a FIFO or a socket (as root,
  // `init -o /dev/sda -f`) would replace the node itself. A directory would fail the rename anyway.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fail(fmt::format("is {}, not a regular file: not replaced", file_kind(st.st_mode)), path.string(),
                "write to a regular file's path");
  const auto dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::string tmpl = (dir / fmt::format(".{}.XXXXXX", path.filename().string())).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    return fail(fmt::format("cannot create a temporary file: {}", std::strerror(errno)), dir.string(),
                "check that the directory exists and is writable");
  }
  const auto close_and_fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    return fail(fmt::format("{}: {}", what, std::strerror(err)), path.string());
  };
  if (!write_all(fd, content) || ::fchmod(fd, 0644) != 0) return close_and_fail("cannot write");
  if (::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    return fail(fmt::format("cannot write: {}", std::strerror(errno)), path.string());
  }
  if (replace == Replace::never) {
    // link() fails when the target exists, even when it appeared after any check.
    if (::link(tmpl.c_str(), path.c_str()) == 0) {
      ::unlink(tmpl.c_str());
      return {};
    }
    const int err = errno;
    std::error_code ec;
    if (err == EEXIST || fs::exists(path, ec)) {
      ::unlink(tmpl.c_str());
      return fail("already exists", path.string(), "remove it, or write elsewhere");
    }
    // A filesystem without hard links: rename, after the check above.
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    return fail(fmt::format("cannot rename into place: {}", std::strerror(err)), path.string());
  }
  return {};
}

Result<void> write_new_file(const fs::path& path, std::string_view content, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return fail(fmt::format("cannot create: {}", std::strerror(errno)), path.string());
  const auto close_and_fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return fail(fmt::format("{}: {}", what, std::strerror(err)), path.string());
  };
  // The mode whatever the umask (on the descriptor: no second lookup of the name).
  if (!write_all(fd, content) || ::fchmod(fd, mode) != 0) return close_and_fail("cannot write");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return fail(fmt::format("cannot write: {}", std::strerror(err)), path.string());
  }
  return {};
}

Result<void> append_line(const fs::path& path, std::string_view line, std::string_view what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail(fmt::format("cannot open {}: {}", what, std::strerror(errno)), path.string());
  const auto n = ::write(fd, line.data(), line.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    return fail(fmt::format("cannot append to {}: {}", what, std::strerror(err)), path.string());
  return {};
}

}  // namespace trnslurm
