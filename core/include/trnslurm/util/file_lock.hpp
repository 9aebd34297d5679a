#pragma once
// An exclusive flock on a file, held while the object lives: the kernel drops it when the last
// descriptor closes, so also when the process dies, however it dies.

#include <filesystem>
#include <string_view>
#include <utility>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

class FileLock {
 public:
  enum class Wait { no, yes };
  // Opens (creating, 0644) and locks `path`. Wait::no: "busy" when another holder has it.
  // A file system without flock (some FUSE mounts) gives the lock as held: callers that must not
  // rely on it say what else protects them. `what` names the lock in errors ("the submit lock").
  static Result<FileLock> acquire(const std::filesystem::path& path, Wait wait, std::string_view what);
  // Whether acquire(Wait::no) failed because another holder has the lock.
  static bool busy(const Error& error);

  FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace trnslurm
