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
