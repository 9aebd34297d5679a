#include "trnslurm/node/sysfs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

std::optional<std::string> read_sysfs_line(const std::filesystem::path& file) {
  return read_sysfs_line_at(AT_FDCWD, file.c_str());
}

std::optional<std::string> read_sysfs_line_at(int dir, const char* file) {
  // Read in slurmstepd under a site's root=: a FIFO or a device there must not block the step or
  // be read at all (O_NONBLOCK, then only a regular file: sysfs attributes are).
  const int fd = openat(dir, file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return std::nullopt;
  }
  std::array<char, 4096> buf{};
  const ssize_t n = read(fd, buf.data(), buf.size());
  close(fd);
  if (n <= 0) return std::nullopt;
  std::string text(buf.data(), static_cast<std::size_t>(n));
  if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.pop_back();
  if (text.empty()) return std::nullopt;
  return text;
}

std::optional<std::uint64_t> read_sysfs_number(const std::filesystem::path& file) {
  const auto text = read_sysfs_line(file);
  if (!text) return std::nullopt;
  return parse_number<std::uint64_t>(*text);
}

}  // namespace trnslurm
