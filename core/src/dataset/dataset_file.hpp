#pragma once

// Reading dataset files defensively: one descriptor, positioned reads (pread) of exactly the bytes
// asked for, every range checked against the file size first, errors naming file and byte offset.
// Internal to the core (not installed).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "trnslurm/util/error.hpp"

namespace trnslurm::dataset {

static_assert(std::endian::native == std::endian::little,
              "Arrow metadata, Arrow bodies and Megatron .idx files are little-endian");

// Error::where for a position in a dataset file: "path:offset N".
std::string where(const std::filesystem::path& file, std::uint64_t offset);

// Reads a little-endian value from unaligned bytes.
template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

class ReadOnlyFile {
 public:
  // A regular file (symlinks followed); directories, devices and FIFOs are refused, so a read
  // never blocks on a pipe.
  static Result<ReadOnlyFile> open(const std::filesystem::path& path);
  // The same, `name` looked up in the directory `dir` (an open descriptor) rather than from the
  // root: a dataset of 10,000 shards walks its directory's path once, not 10,000 times. `path` is
  // what errors name.
  static Result<ReadOnlyFile> open_in(const class Directory& dir, const char* name,
                                      const std::filesystem::path& path);

  ReadOnlyFile(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile& operator=(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ~ReadOnlyFile();

  std::uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

  // True when [offset, offset + length) lies inside the file (no overflow).
  bool contains(std::uint64_t offset, std::uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }

  // Reads exactly out.size() bytes at offset. A range past the end is an Error saying what was
  // being read (`what`), where, and how long the file is.
  Result<void> read(std::uint64_t offset, std::span<std::byte> out, std::string_view what) const;

  // The Error for a range that does not fit in the file.
  Error past_end(std::uint64_t offset, std::uint64_t length, std::string_view what) const;

 private:
  static Result<ReadOnlyFile> adopt(int fd, const std::filesystem::path& path);
  ReadOnlyFile(int fd, std::uint64_t size, std::filesystem::path path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::filesystem::path path_;
};

// An open directory, to open the files in it by name.
class Directory {
 public:
  static Result<Directory> open(const std::filesystem::path& path);
  Directory(Directory&& other) noexcept;
  Directory& operator=(Directory&&) = delete;
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;
  ~Directory();
  int fd() const { return fd_; }

 private:
  explicit Directory(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Reads a whole small text file (state.json, dataset_info.json...), refusing one over max_bytes.
Result<std::string> read_small_file(const std::filesystem::path& path, std::uint64_t max_bytes);

// A small text file read a chunk at a time by a parser that pulls one character after another
// (nlohmann::json::sax_parse over begin(), end()): what is held is one chunk, not the file. It is
// opened with the checks of read_small_file, and read no further than the size it had then.
class TextReader {
 public:
  static Result<TextReader> open(const std::filesystem::path& path, std::uint64_t max_bytes);

  // A single-pass input iterator over the characters.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = char;
    Iterator() = default;
    explicit Iterator(TextReader* reader) : reader_(reader) {}
    char operator*() const { return reader_->chunk_[reader_->at_]; }
    Iterator& operator++() {
      ++reader_->at_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return done() == other.done(); }

   private:
    bool done() const { return reader_ == nullptr || !reader_->fill(); }
    TextReader* reader_ = nullptr;
  };
  Iterator begin() { return Iterator(this); }
  static Iterator end() { return {}; }

  // Why the characters ended before the size the file had when opened (it shrank, a read
  // failed), if they did.
  const std::optional<Error>& error() const { return error_; }

 private:
  explicit TextReader(ReadOnlyFile file) : file_(std::move(file)) {}
  // True when a character is at at_, reading the next chunk if needed.
  bool fill();
  ReadOnlyFile file_;
  std::string chunk_;
  std::size_t at_ = 0;
  std::uint64_t next_offset_ = 0;
  std::optional<Error> error_;
};

}  // namespace trnslurm::dataset
