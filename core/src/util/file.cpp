#include "trnslurm/util/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

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

std::expected<std::string, ReadFailure> read_file(const fs::path& path, std::size_t max_size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(ReadFailure::unreadable);
  // Read in chunks: allocating (and zeroing) a cap up front cost every command ~0.4 ms.
  std::string text;
  std::array<char, 16384> chunk{};
  while (in && text.size() <= max_size) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return std::unexpected(ReadFailure::unreadable);
  if (text.size() > max_size) return std::unexpected(ReadFailure::too_large);
  return text;
}

Result<void> write_file_atomic(const fs::path& path, std::string_view content, Replace replace) {
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

}  // namespace trnslurm
