#pragma once
// An open file descriptor, closed on every path out.

#include <unistd.h>

namespace trnslurm {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes it now (the write end of a pipe, before reading what the other side wrote).
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace trnslurm
