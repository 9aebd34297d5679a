#include "trnslurm/util/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace trnslurm {
namespace {
constexpr std::string_view held_elsewhere = "is held by another process";
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& path, Wait wait, std::string_view what) {
  // O_CLOEXEC: a child (an sbatch) must not keep the lock after its parent died.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fail(fmt::format("cannot create {}: {}", what, std::strerror(errno)), path.string());
  FileLock lock(fd);
  if (wait == Wait::yes) {
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  } else if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    return fail(fmt::format("{} {}", what, held_elsewhere), path.string());
  }
  return lock;
}

bool FileLock::busy(const Error& error) {
  return error.what.ends_with(held_elsewhere);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor drops the lock
}

}  // namespace trnslurm
