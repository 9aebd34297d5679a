#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "../fixtures.hpp"
#include "trnslurm/node/site_config.hpp"

using namespace trnslurm;
using trnslurm::test::ScratchDir;

namespace {
void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
}  // namespace

TEST_CASE("site_config: PlugStackConfig of slurm.conf, then the files it includes, relative to it") {
  ScratchDir d;
  write(d / "etc/slurm.conf",
        "ClusterName=c\nPlugStackConfig=" + (d / "etc/spank/main.conf").string() + "\n");
  write(d / "etc/spank/main.conf", "optional /x/other.so\ninclude conf.d/*.conf\ninclude /nowhere/*.conf\n");
  write(d / "etc/spank/conf.d/trn.conf", "required /opt/trnslurm.so lnc=2\n");
  const auto cfg = read_site_config(d / "etc/slurm.conf", std::nullopt);
  CHECK(cfg.slurm_conf_found);
  CHECK(cfg.plugstack == (d / "etc/spank/main.conf").string());
  CHECK(cfg.plugstack_found);
  // A pattern matching nothing (/nowhere) is skipped, as Slurm skips it.
  CHECK(cfg.files_read == std::vector<std::string>{(d / "etc/spank/main.conf").string(),
                                                   (d / "etc/spank/conf.d/trn.conf").string()});
  REQUIRE(cfg.line);
  CHECK(cfg.line->file == (d / "etc/spank/conf.d/trn.conf").string());
  CHECK(cfg.line->path == "/opt/trnslurm.so");
  REQUIRE(cfg.site);
  CHECK(cfg.site->defaults.lnc == 2);
}

TEST_CASE("site_config: without PlugStackConfig, plugstack.conf beside slurm.conf, the override wins") {
  ScratchDir d;
  write(d / "slurm.conf", "ClusterName=c\n");
  write(d / "plugstack.conf", "required /a/trnslurm.so\n");
  write(d / "other.conf", "optional /b/trnslurm.so\n");
  const auto beside = read_site_config(d / "slurm.conf", std::nullopt);
  REQUIRE(beside.line);
  CHECK(beside.line->path == "/a/trnslurm.so");
  const auto given = read_site_config(d / "slurm.conf", (d / "other.conf").string());
  REQUIRE(given.line);
  CHECK(given.line->path == "/b/trnslurm.so");
  CHECK_FALSE(given.line->required);
}

TEST_CASE("site_config: an include cycle reads each file once and ends") {
  ScratchDir d;
  write(d / "slurm.conf", "");
  write(d / "plugstack.conf", "include a.conf\n");
  write(d / "a.conf", "include ./b.conf\n");
  write(d / "b.conf", "include " + (d / "plugstack.conf").string() + "\ninclude a.conf\n");
  const auto cfg = read_site_config(d / "slurm.conf", std::nullopt);
  CHECK(cfg.files_read == std::vector<std::string>{(d / "plugstack.conf").string(), (d / "a.conf").string(),
                                                   (d / "./b.conf").string()});
  CHECK_FALSE(cfg.line);
  CHECK(cfg.site);  // no line: the defaults, no error
}

TEST_CASE("site_config: missing files are settings, not errors") {
  ScratchDir d;
  const auto none = read_site_config(d / "slurm.conf", std::nullopt);
  CHECK_FALSE(none.slurm_conf_found);
  CHECK_FALSE(none.plugstack_found);
  CHECK(none.plugstack == (d / "plugstack.conf").string());
  CHECK(none.files_read.empty());
  CHECK(none.site);

  write(d / "plugstack.conf", "include missing.conf\n");
  const auto dangling = read_site_config(d / "slurm.conf", std::nullopt);
  CHECK(dangling.plugstack_found);
  CHECK(dangling.files_read == std::vector<std::string>{(d / "plugstack.conf").string()});
  CHECK_FALSE(dangling.line);
}

TEST_CASE("site_config: a FIFO in an included file's place, or bad arguments, are errors that name them") {
  ScratchDir d;
  write(d / "plugstack.conf", "include fifo.conf\ninclude trn.conf\n");
  write(d / "trn.conf", "required /a/trnslurm.so lnc=banana\n");
  REQUIRE(::mkfifo((d / "fifo.conf").c_str(), 0600) == 0);
  const auto cfg = read_site_config(d / "slurm.conf", std::nullopt);
  REQUIRE_FALSE(cfg.site);
  CHECK_THAT(to_string(cfg.site.error()), Catch::Contains("fifo.conf") && Catch::Contains("FIFO"));

  std::filesystem::remove(d / "fifo.conf");
  const auto bad = read_site_config(d / "slurm.conf", std::nullopt);
  REQUIRE_FALSE(bad.site);
  CHECK_THAT(to_string(bad.site.error()), Catch::Contains("lnc"));
}

TEST_CASE(
    "site_config: the file that holds the trnslurm line ends the search, includes are followed four "
    "levels deep at most") {
  ScratchDir first;
  write(first / "plugstack.conf", "include other.conf\nrequired /top/trnslurm.so\n");
  write(first / "other.conf", "required /other/trnslurm.so\n");
  const auto top = read_site_config(first / "slurm.conf", std::nullopt);
  REQUIRE(top.line);
  CHECK(top.line->path == "/top/trnslurm.so");
  CHECK(top.files_read.size() == 1);

  ScratchDir d;
  write(d / "plugstack.conf", "include l1.conf\n");
  write(d / "l1.conf", "include l2.conf\n");
  write(d / "l2.conf", "include l3.conf\n");
  write(d / "l3.conf", "include l4.conf\n");
  write(d / "l4.conf", "required /deep/trnslurm.so\n");
  const auto cfg = read_site_config(d / "slurm.conf", std::nullopt);
  CHECK(cfg.files_read.size() == 4);
  CHECK_FALSE(cfg.line);
}
