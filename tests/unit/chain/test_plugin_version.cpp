#include <catch2/catch.hpp>

#include "fake_slurm.hpp"
#include "trnslurm/chain/plugin_version.hpp"

using namespace trnslurm;
using health::Status;

namespace {
constexpr std::uint32_t v22_05 = (22u << 16) | (5u << 8) | 8u;
}

TEST_CASE("plugin_version: major.minor of a plugin_version and of a dotted version") {
  CHECK(slurm_major_minor(v22_05) == "22.05");
  CHECK(slurm_major_minor((23u << 16) | (11u << 8) | 4u) == "23.11");
  CHECK(slurm_major_minor("22.05.8") == "22.05");
  CHECK(slurm_major_minor("24.05.0-0rc1") == "24.05");
  CHECK(slurm_major_minor("23.11") == "23.11");
}

TEST_CASE("plugin_version: the same major.minor as slurmctld loads, another patch release too") {
  const auto f = plugin_version_findings(v22_05, std::string("22.05.11"), "22.05.8");
  REQUIRE(f.size() == 1);
  CHECK(f[0].check == "version");
  CHECK(f[0].status == Status::ok);
  CHECK(f[0].detail == "plugin built for Slurm 22.05, slurmctld runs 22.05.11");
}

TEST_CASE("plugin_version: slurmctld older or newer than the plugin fails, either way") {
  for (const std::string running : {"21.08.8", "23.02.1"}) {
    const auto f = plugin_version_findings(v22_05, running, "22.05.8");
    REQUIRE(f.size() == 1);
    CHECK(f[0].status == Status::fail);
    CHECK_THAT(f[0].detail,
               Catch::Contains("slurmctld runs " + running) && Catch::Contains("Slurm refuses to load it"));
  }
}

TEST_CASE(
    "plugin_version: slurmctld out of reach warns, a plugin built for another Slurm than trnslurm warns") {
  const Result<std::string> down = fail("Unable to contact slurm controller", "scontrol show config");
  auto f = plugin_version_findings(v22_05, down, "22.05.8");
  REQUIRE(f.size() == 1);
  CHECK(f[0].status == Status::warn);
  CHECK(f[0].detail == "plugin built for Slurm 22.05; slurmctld not reachable to compare");

  f = plugin_version_findings(v22_05, std::string("22.05.8"), "23.11.1");
  REQUIRE(f.size() == 2);
  CHECK(f[0].status == Status::ok);
  CHECK(f[1].status == Status::warn);
  CHECK(f[1].detail == "this trnslurm was built against Slurm 23.11.1, the plugin for 22.05");
}

TEST_CASE("plugin_version: an unreadable plugin fails without asking Slurm") {
  test::FakeSlurm slurm;
  slurm.version = "";  // were Slurm asked, this would be a warning, not the plugin's FAIL
  const auto f = check_plugin_version("/does/not/exist/trnslurm.so", slurm, "22.05.8");
  REQUIRE(f.size() == 1);
  CHECK(f[0].check == "plugin");
  CHECK(f[0].status == Status::fail);
  CHECK_THAT(f[0].detail, Catch::Contains("/does/not/exist/trnslurm.so"));
}
