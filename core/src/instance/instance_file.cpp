// The site's instances file: read in slurmstepd (partly as root) and by the CLI, so only a file
// nobody but root (or the reader itself) can change is trusted.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "trnslurm/instance/instance.hpp"

namespace trnslurm {

namespace {

// Owned by root or by whoever reads it, and writable by nobody else: a user can then only
// influence the jobs of a user it already is.
Result<void> check_trusted(const struct stat& st, const std::string& path, std::string_view what) {
  if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fail(fmt::format("{} is owned by uid {} or writable by others: not trusted", what, st.st_uid),
                path,
                "the site's instances file and its directory must belong to root, mode 0644/0755 at most");
  return {};
}

}  // namespace

Result<InstanceFile> read_site_instances(const std::string& path) {
  const std::filesystem::path file(path);
  if (!file.is_absolute())
    return fail("the site's instances file must be an absolute path", path,
                "give instances=/etc/... in plugstack.conf");
  struct stat st {};
  const auto dir = file.parent_path();
  if (stat(dir.c_str(), &st) != 0)
    return fail(fmt::format("cannot read its directory: {}", std::strerror(errno)), dir.string());
  if (auto ok = check_trusted(st, dir.string(), "the directory"); !ok) return std::unexpected(ok.error());
  // O_NONBLOCK: a FIFO in its place is refused below, not waited on inside slurmstepd.
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return fail(fmt::format("cannot read the site's instances file: {}", std::strerror(errno)), path,
                "check the path given as instances= in plugstack.conf");
  InstanceFile out{"", path, InstanceOrigin::site};
  Result<void> ok;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ok = fail("not a regular file", path, "point instances= at the TOML file itself");
  } else if (ok = check_trusted(st, path, "the file"); ok) {
    // A site file holds a few types: refuse anything beyond 1 MiB rather than read it.
    constexpr std::size_t max_size = std::size_t{1} << 20;
    std::array<char, 16384> chunk{};
    for (;;) {
      const ssize_t n = read(fd, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ok = fail(fmt::format("cannot read: {}", std::strerror(errno)), path);
        break;
      }
      if (n == 0) break;
      out.text.append(chunk.data(), static_cast<std::size_t>(n));
      if (out.text.size() > max_size) {
        ok = fail("the site's instances file is larger than 1 MiB", path, "it holds a few small tables");
        break;
      }
    }
  }
  close(fd);
  if (!ok) return std::unexpected(ok.error());
  return out;
}

}  // namespace trnslurm
