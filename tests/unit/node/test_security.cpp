// The plugin's security claims that a unit test can check (docs/security.md); the rest run on
// the real cluster in tests/integration/test_security.sh.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "fixtures.hpp"
#include "trnslurm/instance/instance.hpp"
#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/settings.hpp"
#include "trnslurm/node/task_env.hpp"
#include "trnslurm/util/printable.hpp"

namespace fs = std::filesystem;
using namespace trnslurm;

TEST_CASE("security: option values with newlines, control characters or huge sizes are refused") {
  const std::string huge(1 << 20, '1');
  CHECK_FALSE(parse_cores("4\n"));
  CHECK_FALSE(parse_cores(huge));
  CHECK_FALSE(parse_efa("on\n"));
  CHECK_FALSE(parse_env_switch("on\r"));
  CHECK_FALSE(parse_cache("/ok\nforged"));
  CHECK_FALSE(parse_cache("/ok\x1b[2J"));
  CHECK_FALSE(parse_cache("/" + huge));
  CHECK_FALSE(parse_root_comm(std::string_view("46820\n"), 46820));
  CHECK_FALSE(parse_root_comm(std::string_view(huge), 46820));
  // And the message naming the value is one printable line of bounded size.
  const auto err = parse_cores("4\nerror: forged");
  REQUIRE_FALSE(err);
  const auto line = printable(to_string(err.error()));
  CHECK(line.find('\n') == std::string::npos);
  const auto big = parse_cache("/" + huge);
  REQUIRE_FALSE(big);
  CHECK(printable(to_string(big.error())).size() <= 1024 + 3);
}

TEST_CASE("security: root= and state_dir= are plugstack arguments, never user options") {
  UserOptions opts;
  for (const char* name : {"root", "state_dir", "trn-root", "trn-state-dir", "trn-state_dir"}) {
    const auto r = apply_option(opts, name, std::string_view("/tmp/evil"), 46820);
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("unknown option") != std::string::npos);
  }
  const auto site = parse_plugstack_args({"root=/admin/%n", "state_dir=/run/trnslurm"});
  REQUIRE(site);
  const auto merged = merge(*site, opts);
  CHECK(merged.cache == SiteSettings{}.defaults.cache);
  // %n is the only expansion: no environment variable or other % reaches the path.
  CHECK(expand_node_pattern("/admin/%n", "n1").value() == "/admin/n1");
  CHECK_FALSE(expand_node_pattern("/admin/%u", "n1"));
  CHECK_FALSE(expand_node_pattern("/admin/%n", "../etc"));
}

TEST_CASE("security: an EFA answer in a user-owned file or directory is not trusted") {
  if (test::skip_unless_root("files are given away to another user")) return;
  const test::ScratchDir tmp;
  const auto& dir = tmp.path();
  REQUIRE(write_efa_state(dir, {EfaState::present, "probed"}));
  REQUIRE(read_efa_state(dir));  // trusted as the slurmd left it: the checks below can fail
  REQUIRE(chown((dir / "efa").c_str(), 65534, 65534) == 0);
  auto r = read_efa_state(dir);
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("not trusted") != std::string::npos);
  REQUIRE(chown((dir / "efa").c_str(), 0, 0) == 0);
  REQUIRE(read_efa_state(dir));
  REQUIRE(chown(dir.c_str(), 65534, 65534) == 0);
  CHECK_FALSE(read_efa_state(dir));
  // Nor does the slurmd (root) write into a directory a user owns.
  CHECK_FALSE(write_efa_state(dir, {EfaState::absent, "probed"}));
  REQUIRE(chown(dir.c_str(), 0, 0) == 0);
  // A symlink in place of the file is not followed.
  fs::remove(dir / "efa");
  fs::create_symlink("/etc/hostname", dir / "efa");
  CHECK_FALSE(read_efa_state(dir));
}

namespace {

// A valid site instances file, dir/instances.toml, mode 0644.
fs::path write_instances(const fs::path& dir) {
  const auto file = dir / "instances.toml";
  std::FILE* f = std::fopen(file.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("[instances.\"a.b\"]\ntarget = \"cpu\"\n", f);
  std::fclose(f);
  fs::permissions(file, fs::perms(0644));
  return file;
}

}  // namespace

TEST_CASE("security: the site's instances file is trusted only as root's (or the reader's) own") {
  const test::ScratchDir tmp;
  const auto& dir = tmp.path();
  const auto file = write_instances(dir);
  REQUIRE(read_site_instances(file.string()));         // trusted as written: the checks below can fail
  CHECK_FALSE(read_site_instances("instances.toml"));  // relative: refused
  CHECK_FALSE(read_site_instances((dir / "missing.toml").string()));
  CHECK_FALSE(read_site_instances(dir.string()));  // a directory
  fs::permissions(file, fs::perms(0664));
  auto r = read_site_instances(file.string());
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("not trusted") != std::string::npos);
  fs::permissions(file, fs::perms(0644));
  fs::permissions(dir, fs::perms(0777));
  CHECK_FALSE(read_site_instances(file.string()));
  fs::permissions(dir, fs::perms(0755));
  {
    std::FILE* f = std::fopen((dir / "big.toml").c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string line(1023, '#');
    for (int i = 0; i < 1100; ++i) std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
  r = read_site_instances((dir / "big.toml").string());
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("larger than 1 MiB") != std::string::npos);
}

TEST_CASE(
    "security: the site's instances file of someone else, or in someone else's directory, is not trusted") {
  if (test::skip_unless_root("files are given away to another user")) return;
  const test::ScratchDir tmp;
  const auto& dir = tmp.path();
  const auto file = write_instances(dir);
  REQUIRE(read_site_instances(file.string()));  // trusted as written: the checks below can fail
  REQUIRE(chown(file.c_str(), 65534, 65534) == 0);
  CHECK_FALSE(read_site_instances(file.string()));
  REQUIRE(chown(file.c_str(), 0, 0) == 0);
  REQUIRE(chown(dir.c_str(), 65534, 65534) == 0);
  CHECK_FALSE(read_site_instances(file.string()));
  REQUIRE(chown(dir.c_str(), 0, 0) == 0);
  REQUIRE(read_site_instances(file.string()));
}
