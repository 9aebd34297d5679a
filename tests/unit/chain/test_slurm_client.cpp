#include <catch2/catch.hpp>

#include "trnslurm/chain/slurm_client.hpp"

using namespace trnslurm;

TEST_CASE("slurm_client: squeue output, with '|' inside the comment") {
  auto rows = parse_squeue(
      "12|FAILED|NonZeroExitCode|0:03|1|n1|768|trn-c-train|trnslurm:c:train\n"
      "13|PENDING|DependencyNeverSatisfied|0:00|2||0|trn-c-convert_back|a|b|c\n"
      "14_2|PENDING|None|0:00|1||0|array|x\n");
  REQUIRE(rows);
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].id == 12);
  CHECK((*rows)[0].state == "FAILED");
  CHECK((*rows)[0].exit_code == "3");
  CHECK((*rows)[0].nodelist == "n1");
  CHECK((*rows)[0].comment == "trnslurm:c:train");
  CHECK((*rows)[1].reason == "DependencyNeverSatisfied");
  CHECK((*rows)[1].nodes == "2");
  CHECK((*rows)[1].comment == "a|b|c");
}

TEST_CASE("slurm_client: malformed squeue output is an error") {
  CHECK_FALSE(parse_squeue("12|RUNNING\n"));
  CHECK(parse_squeue("")->empty());
}

TEST_CASE("slurm_client: wait statuses become exit codes") {
  CHECK(exit_code_from_status("0") == "0");
  CHECK(exit_code_from_status("768") == "3");
  CHECK(exit_code_from_status("9") == "0:9");
  CHECK(exit_code_from_status("") == "");
}

TEST_CASE("slurm_client: sacct output") {
  auto rows = parse_sacct("5|CANCELLED by 0|None|00:00:01|1|n1|0:15|trn-c-x|trnslurm:c:x\n");
  REQUIRE(rows);
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].state == "CANCELLED");
  CHECK((*rows)[0].exit_code == "0:15");
  auto ok = parse_sacct("6|COMPLETED|None|00:00:01|1|n1|0:0|n|c\n");
  CHECK((*ok)[0].exit_code == "0");
}

namespace {
struct Script {
  std::vector<std::vector<std::string>> calls;
  ProcessOutput next;
  CommandRunner runner() {
    return [this](const std::vector<std::string>& argv) -> Result<ProcessOutput> {
      calls.push_back(argv);
      return next;
    };
  }
};
}  // namespace

TEST_CASE("slurm_client: sbatch returns the id or sbatch's own message") {
  Script s;
  CommandSlurmClient c(s.runner());
  s.next = {0, "41\n", ""};
  CHECK(*c.sbatch({"sbatch", "x.sh"}) == 41);
  s.next = {1, "", "sbatch: error: invalid partition specified: nope\n"};
  auto e = c.sbatch({"sbatch", "x.sh"});
  REQUIRE_FALSE(e);
  CHECK(e.error().what == "sbatch: error: invalid partition specified: nope");
}

TEST_CASE("slurm_client: one squeue call - only forgotten ids is not an error") {
  Script s;
  CommandSlurmClient c(s.runner());
  s.next = {1, "", "slurm_load_jobs error: Invalid job id specified\n"};
  auto rows = c.squeue({1, 2});
  REQUIRE(rows);
  CHECK(rows->empty());
  REQUIRE(s.calls.size() == 1);
  CHECK(s.calls[0] == squeue_argv({1, 2}));
  CHECK(s.calls[0][5] == "1,2");
  s.next = {1, "", "squeue: error: Unable to contact slurm controller\n"};
  CHECK_FALSE(c.squeue({1}));
}

TEST_CASE("slurm_client: sacct without accounting falls back") {
  Script s;
  CommandSlurmClient c(s.runner());
  s.next = {1, "", "Slurm accounting storage is disabled\n"};
  auto r = c.sacct({1});
  REQUIRE(r);
  CHECK_FALSE(r->has_value());
}

TEST_CASE("slurm_client: the cluster's node features, once each") {
  CHECK(node_features_argv() == std::vector<std::string>{"sinfo", "-h", "-N", "-o", "%f"});
  CHECK(parse_node_features("us1\nus1\nus2,trn2u\n(null)\n  us2 \n\n") ==
        std::vector<std::string>{"us1", "us2", "trn2u"});
  CHECK(parse_node_features("").empty());
}

TEST_CASE(
    "slurm_client: scontrol for the pre-flight, a job Slurm no longer knows, and every failure Slurm's") {
  Script s;
  CommandSlurmClient c(s.runner());
  s.next = {0, "JobId=7 ExcNodeList=n3 NodeList=n1\n", ""};
  auto shown = c.show_job(7);
  REQUIRE(shown);
  REQUIRE(shown->has_value());
  CHECK(**shown == "JobId=7 ExcNodeList=n3 NodeList=n1\n");
  CHECK(s.calls.back() == std::vector<std::string>{"scontrol", "show", "job", "-o", "7"});

  s.next = {1, "", "slurm_load_jobs error: Invalid job id specified\n"};
  shown = c.show_job(7);
  REQUIRE(shown);
  CHECK_FALSE(shown->has_value());

  s.next = {1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"};
  shown = c.show_job(7);
  REQUIRE_FALSE(shown);
  CHECK(shown.error().what == "slurm_load_jobs error: Unable to contact slurm controller (connect failure)");
  CHECK(shown.error().where == "scontrol show job");
  CHECK(shown.error().kind == ErrorKind::slurm);

  s.next = {0, "", ""};
  REQUIRE(c.requeue(7));
  CHECK(s.calls.back() == std::vector<std::string>{"scontrol", "requeue", "7"});
  REQUIRE(c.exclude_nodes(7, "n3,n1"));
  CHECK(s.calls.back() == std::vector<std::string>{"scontrol", "update", "JobId=7", "ExcNodeList=n3,n1"});
  REQUIRE(c.show_node("n1"));
  CHECK(s.calls.back() == std::vector<std::string>{"scontrol", "show", "node", "-o", "n1"});

  s.next = {1, "", "scontrol: error: Job is no longer pending execution for job 7\n"};
  const auto refused = c.exclude_nodes(7, "n1");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::slurm);
}

TEST_CASE("slurm_client: a Slurm command that cannot run is a Slurm failure, whatever the runner said") {
  CommandSlurmClient c([](const std::vector<std::string>&) -> Result<ProcessOutput> {
    return fail("not found in PATH", "squeue");
  });
  const auto rows = c.squeue({1});
  REQUIRE_FALSE(rows);
  CHECK(rows.error().kind == ErrorKind::slurm);
  CHECK(rows.error().what == "not found in PATH");
  const auto id = c.sbatch({"sbatch", "x.sh"});
  REQUIRE_FALSE(id);
  CHECK(id.error().kind == ErrorKind::slurm);
  Script s;
  CommandSlurmClient d(s.runner());
  s.next = {0, "no id here\n", ""};
  const auto garbled = d.sbatch({"sbatch", "x.sh"});
  REQUIRE_FALSE(garbled);
  CHECK(garbled.error().kind == ErrorKind::slurm);
}

TEST_CASE("slurm_client: slurmctld's version from scontrol show config") {
  CHECK(parse_config_version("Configuration data as of 2026-11-27T23:00:00\n"
                             "AccountingStorageBackupHost = (null)\n"
                             "SLURM_CONF              = /etc/slurm/slurm.conf\n"
                             "SLURM_VERSION           = 22.05.8\n"
                             "SrunEpilog              = (null)\n") == "22.05.8");
  CHECK_FALSE(parse_config_version("SLURM_CONF = /etc/slurm/slurm.conf\n"));
  CHECK_FALSE(parse_config_version("SLURM_VERSION =\n"));

  Script s;
  CommandSlurmClient c(s.runner());
  s.next = {0, "SLURM_VERSION = 23.11.4\n", ""};
  const auto v = c.controller_version();
  REQUIRE(v);
  CHECK(*v == "23.11.4");
  CHECK(s.calls.back() == std::vector<std::string>{"scontrol", "show", "config"});

  s.next = {1, "", "slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)\n"};
  const auto down = c.controller_version();
  REQUIRE_FALSE(down);
  CHECK(down.error().kind == ErrorKind::slurm);
  CHECK_THAT(down.error().what, Catch::Contains("Unable to contact"));

  s.next = {0, "garbage\n", ""};
  REQUIRE_FALSE(c.controller_version());
}
