#include "dataset_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

namespace trnslurm::dataset {

std::string where(const std::filesystem::path& file, std::uint64_t offset) {
  return fmt::format("{}:offset {}", file.string(), offset);
}

namespace {
constexpr int open_flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
}

Result<ReadOnlyFile> ReadOnlyFile::open(const std::filesystem::path& path) {
  return adopt(::open(path.c_str(), open_flags), path);
}

Result<ReadOnlyFile> ReadOnlyFile::open_in(const Directory& dir, const char* name,
                                           const std::filesystem::path& path) {
  return adopt(::openat(dir.fd(), name, open_flags), path);
}

Result<Directory> Directory::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return fail(fmt::format("cannot open the directory: {}", std::generic_category().message(err)),
                path.string(), "check the dataset path and its permissions");
  }
  return Directory(fd);
}

Directory::Directory(Directory&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Directory::~Directory() {
  if (fd_ >= 0) ::close(fd_);
}

Result<ReadOnlyFile> ReadOnlyFile::adopt(int fd, const std::filesystem::path& path) {
  if (fd < 0) {
    const int err = errno;
    return fail(fmt::format("cannot open: {}", std::generic_category().message(err)), path.string(),
                err == ENOENT ? "check the dataset path" : "check the file's permissions");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
    ::close(fd);
    return fail("not a regular file", path.string(), "a dataset file must be a regular file");
  }
  // Only headers are read, a few hundred bytes here and there: read-ahead would pull in the
  // record batch bodies around them (megabytes per shard on a cold cache or a network file system).
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  return ReadOnlyFile(fd, static_cast<std::uint64_t>(st.st_size), path);
}

ReadOnlyFile::ReadOnlyFile(ReadOnlyFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)) {}

ReadOnlyFile& ReadOnlyFile::operator=(ReadOnlyFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
  }
  return *this;
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

Error ReadOnlyFile::past_end(std::uint64_t offset, std::uint64_t length, std::string_view what) const {
  return Error{fmt::format("truncated or corrupt: {} needs {} bytes at offset {} but the file has {} bytes",
                           what, length, offset, size_),
               where(path_, offset), "the file is incomplete or damaged: copy or regenerate it"};
}

Result<void> ReadOnlyFile::read(std::uint64_t offset, std::span<std::byte> out, std::string_view what) const {
  if (!contains(offset, out.size())) return std::unexpected(past_end(offset, out.size(), what));
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return fail(
          fmt::format("read error while reading {}: {}", what, std::generic_category().message(errno)),
          where(path_, offset + done));
    }
    // The file shrank since it was opened.
    if (n == 0) return std::unexpected(past_end(offset, out.size(), what));
    done += static_cast<std::size_t>(n);
  }
  return {};
}

namespace {
Result<ReadOnlyFile> open_small_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto file = ReadOnlyFile::open(path);
  if (!file) return std::unexpected(file.error());
  if (file->size() > max_bytes) {
    return fail(fmt::format("file of {} bytes is larger than the {} bytes accepted", file->size(), max_bytes),
                path.string(), "this is not a file that datasets' save_to_disk writes");
  }
  return file;
}
}  // namespace

Result<std::string> read_small_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto file = open_small_file(path, max_bytes);
  if (!file) return std::unexpected(file.error());
  std::string text(static_cast<std::size_t>(file->size()), '\0');
  auto ok = file->read(0, std::as_writable_bytes(std::span(text)), "the file");
  if (!ok) return std::unexpected(ok.error());
  return text;
}

Result<TextReader> TextReader::open(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto file = open_small_file(path, max_bytes);
  if (!file) return std::unexpected(file.error());
  return TextReader(std::move(*file));
}

bool TextReader::fill() {
  if (at_ < chunk_.size()) return true;
  if (error_ || next_offset_ >= file_.size()) return false;
  // Large enough that the system calls cost nothing beside the parse, small beside what is kept.
  constexpr std::uint64_t chunk_bytes = 256u << 10;
  chunk_.resize(static_cast<std::size_t>(std::min(chunk_bytes, file_.size() - next_offset_)));
  at_ = 0;
  if (auto ok = file_.read(next_offset_, std::as_writable_bytes(std::span(chunk_)), "the file"); !ok) {
    error_ = ok.error();
    chunk_.clear();
    return false;
  }
  next_offset_ += chunk_.size();
  return true;
}

}  // namespace trnslurm::dataset
