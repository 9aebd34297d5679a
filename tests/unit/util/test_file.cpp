#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "fixtures.hpp"
#include "trnslurm/util/file.hpp"

using namespace trnslurm;
namespace fs = std::filesystem;

TEST_CASE("file: atomic writes replace the file and leave no temporary behind") {
  const test::ScratchDir t;
  const auto f = t / "x.json";
  REQUIRE(write_file_atomic(f, "one"));
  REQUIRE(write_file_atomic(f, "two"));
  CHECK(read_file(f).value() == "two");
  CHECK(std::distance(fs::directory_iterator(t.path()), fs::directory_iterator()) == 1);
  struct stat st {};
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  CHECK_FALSE(write_file_atomic(t / "missing" / "x", "y"));
}

TEST_CASE("file: Replace::never refuses an existing file and leaves it as it was") {
  const test::ScratchDir t;
  const auto f = t / "trnslurm.toml";
  REQUIRE(write_file_atomic(f, "first", Replace::never));
  const auto again = write_file_atomic(f, "second", Replace::never);
  REQUIRE_FALSE(again);
  CHECK(again.error().what == "already exists");
  CHECK(read_file(f).value() == "first");
  CHECK(std::distance(fs::directory_iterator(t.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("file: write_new_file creates with its mode whatever the umask, never replaces") {
  const test::ScratchDir t;
  const auto f = t / "train.sh";
  const mode_t old = ::umask(077);
  const auto made = write_new_file(f, "#!/bin/bash\n", 0755);
  ::umask(old);
  REQUIRE(made);
  CHECK(read_file(f).value() == "#!/bin/bash\n");
  struct stat st {};
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0755);
  const auto again = write_new_file(f, "other", 0644);
  REQUIRE_FALSE(again);
  CHECK(again.error().where == f.string());
  CHECK(read_file(f).value() == "#!/bin/bash\n");
  CHECK_FALSE(write_new_file(t / "missing" / "x", "y", 0644));
  CHECK(std::distance(fs::directory_iterator(t.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("file: read_file reads whole files, refuses missing and too large ones") {
  const test::ScratchDir t;
  const std::string big(40000, 'x');  // more than one read chunk
  REQUIRE(write_file_atomic(t / "big", big));
  CHECK(read_file(t / "big").value() == big);
  CHECK(read_file(t / "big", big.size()).value() == big);
  CHECK(read_file(t / "big", big.size() - 1).error() == ReadFailure::too_large);
  CHECK(read_file(t / "none").error() == ReadFailure::unreadable);
  CHECK(read_file(test::fixture("recipes/minimal.toml")).value().find("[model]") != std::string::npos);
}

// Issue 31: a FIFO, a device or a directory in a file's place is refused at once (a FIFO's open
// would wait for a writer forever, /dev/zero would fill memory), and an oversized file unread.
TEST_CASE("file: read_file refuses what is not a regular file, at once") {
  const test::ScratchDir t;
  const auto fifo = t / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(read_file(fifo).error() == ReadFailure::not_regular);
  CHECK(read_file("/dev/zero").error() == ReadFailure::not_regular);
  CHECK(read_file("/dev/null").error() == ReadFailure::not_regular);
  CHECK(read_file(t.path()).error() == ReadFailure::not_regular);
  const auto refused = read_file_or_fail(fifo, 1024, "the recipe");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what == "the recipe is a FIFO, not a regular file: not read");
  CHECK(refused.error().where == fifo.string());
  const auto device = read_file_or_fail("/dev/zero", 1024, "the manifest");
  REQUIRE_FALSE(device);
  CHECK(device.error().what == "the manifest is a character device, not a regular file: not read");
}

TEST_CASE("file: read_file_or_fail names the cap and errno's text") {
  const test::ScratchDir t;
  REQUIRE(write_file_atomic(t / "big", std::string(3000, 'x')));
  const auto big = read_file_or_fail(t / "big", 2048, "the journal");
  REQUIRE_FALSE(big);
  CHECK(big.error().what == "the journal is larger than 2 KiB: not read");
  const auto none = read_file_or_fail(t / "none", 2048, "the journal", "is this a run directory?");
  REQUIRE_FALSE(none);
  CHECK(none.error().what == "cannot read the journal: No such file or directory");
  CHECK(none.error().hint == "is this a run directory?");
  CHECK(read_file_or_fail(t / "big", 3000, "x").value().size() == 3000);
}

TEST_CASE("file: write_file_atomic never replaces what is not a regular file") {
  const test::ScratchDir t;
  const auto fifo = t / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto r = write_file_atomic(fifo, "x");
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "is a FIFO, not a regular file: not replaced");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A symbolic link to a device is judged by the device.
  std::filesystem::create_symlink("/dev/null", t / "null");
  CHECK_FALSE(write_file_atomic(t / "null", "x"));
  REQUIRE(::lstat((t / "null").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  fs::create_directory(t / "dir");
  CHECK_FALSE(write_file_atomic(t / "dir", "x"));
  // Nothing left behind: the refusal comes before the temporary file.
  CHECK(std::distance(fs::directory_iterator(t.path()), fs::directory_iterator()) == 3);
}
