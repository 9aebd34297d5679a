#include <catch2/catch.hpp>

#include "trnslurm/node/plugstack_conf.hpp"

using namespace trnslurm;

TEST_CASE("plugstack_conf: finds the trnslurm line, its arguments and the includes") {
  const auto scan = scan_plugstack(
      "# site plugins\n"
      "optional /usr/lib/slurm/spank_pyxis.so runtime_path=/run/pyxis\n"
      "\n"
      "  required   /opt/trnslurm/lib/trnslurm.so root=/ cores=per-node   # comment\n"
      "include /etc/slurm/plugstack.conf.d/*.conf\n",
      "plugstack.conf");
  REQUIRE(scan.trnslurm);
  CHECK(scan.trnslurm->required);
  CHECK(scan.trnslurm->path == "/opt/trnslurm/lib/trnslurm.so");
  CHECK(scan.trnslurm->args == std::vector<std::string>{"root=/", "cores=per-node"});
  CHECK(scan.trnslurm->line == 4);
  CHECK(scan.trnslurm->file == "plugstack.conf");
  REQUIRE(scan.includes.size() == 1);
  CHECK(scan.includes[0] == "/etc/slurm/plugstack.conf.d/*.conf");
}

TEST_CASE("plugstack_conf: commented out or absent is not found") {
  CHECK_FALSE(scan_plugstack("# required /x/trnslurm.so\n", "f").trnslurm);
  CHECK_FALSE(scan_plugstack("required /x/not-trnslurm.so\n", "f").trnslurm);
  CHECK_FALSE(scan_plugstack("", "f").trnslurm);
}

TEST_CASE("plugstack_conf: slurm.conf values, case-insensitive keys, last one wins") {
  const std::string conf =
      "ClusterName=x\nplugstackconfig=/a/plugstack.conf\n#PlugStackConfig=/b\nPlugStackConfig=/c/p.conf\n";
  CHECK(slurm_conf_value(conf, "PlugStackConfig") == "/c/p.conf");
  CHECK(slurm_conf_value(conf, "ClusterName") == "x");
  CHECK_FALSE(slurm_conf_value(conf, "SlurmctldHost").has_value());
}
