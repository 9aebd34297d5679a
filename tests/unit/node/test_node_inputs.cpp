#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "trnslurm/node/node_inputs.hpp"

using namespace trnslurm;

namespace {

// A front end's answers, recorded: which variables and node lists the core asked about.
struct FakeNode {
  std::map<std::string, std::string> env;
  std::vector<std::string> lists_asked;
  int addr_asked = 0;
  NodeLookups lookups() {
    return {
        [this](const std::string& name) -> std::optional<std::string> {
          const auto it = env.find(name);
          return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
        },
        [this](const std::string& list) -> std::optional<std::string> {
          lists_asked.push_back(list);
          if (list.empty() || (list.find('[') != std::string::npos && list.find(']') == std::string::npos))
            return std::nullopt;
          return list.substr(0, list.find_first_of("[,"));
        },
        [this](const std::string& node) -> std::optional<std::string> {
          ++addr_asked;
          return node == "n1" ? std::optional<std::string>("10.0.0.1") : std::nullopt;
        }};
  }
};

NodeRequest request(std::uint32_t nnodes = 1) {
  NodeRequest r;
  r.site.root = trnslurm::test::fixtures_dir() + "/neuron/cluster/%n";
  r.site.state_dir = "/nonexistent/trnslurm-state/%n";
  r.hostname = "n2";
  r.task.nnodes = nnodes;
  return r;
}

}  // namespace

TEST_CASE("node_inputs: the step's node list, its first host and MASTER_ADDR") {
  FakeNode node;
  node.env = {{"SLURM_STEP_NODELIST", "n1,n2"}, {"SLURM_JOB_NODELIST", "x[1-9]"}};
  const auto in = gather_node_inputs(request(2), node.lookups());
  REQUIRE(in);
  CHECK(node.lists_asked == std::vector<std::string>{"n1,n2"});  // the step's list wins over the job's
  CHECK(in->master.host == "n1");
  CHECK(in->master.address == "10.0.0.1");  // Slurm's NodeAddr, as the lookup answered
  CHECK(in->hostname == "n2");

  node.env.erase("SLURM_STEP_NODELIST");
  node.lists_asked.clear();
  REQUIRE(gather_node_inputs(request(2), node.lookups()));
  CHECK(node.lists_asked == std::vector<std::string>{"x[1-9]"});

  auto given = request(2);
  given.nodelist = "n1";
  node.lists_asked.clear();
  REQUIRE(gather_node_inputs(given, node.lookups()));
  CHECK(node.lists_asked == std::vector<std::string>{"n1"});
}

TEST_CASE("node_inputs: without a node list, a one-node step is this node and a larger one an error") {
  FakeNode node;
  const auto one = gather_node_inputs(request(1), node.lookups());
  REQUIRE(one);
  CHECK(one->master.host == "n2");

  const auto two = gather_node_inputs(request(2), node.lookups());
  REQUIRE_FALSE(two);
  CHECK(two.error().where == "SLURM_STEP_NODELIST");

  auto bad = request(2);
  bad.nodelist = "n[1-";
  const auto unreadable = gather_node_inputs(bad, node.lookups());
  REQUIRE_FALSE(unreadable);
  CHECK(unreadable.error().where == "--nodelist");
  CHECK(unreadable.error().what == "cannot read node list 'n[1-': no MASTER_ADDR");
}

TEST_CASE("node_inputs: the topology and EFA state of this node, %n expanded") {
  FakeNode node;
  const auto in = gather_node_inputs(request(), node.lookups());
  REQUIRE(in);
  CHECK(in->topology.instance_type == "trn1n.32xlarge");  // cluster/n2 is a trn1n
  CHECK(in->efa.state == EfaState::unknown);              // no probe result in the state dir
  CHECK_FALSE(in->efa.detail.empty());

  auto given = request();
  given.efa = EfaProbe{EfaState::present, "asked now"};
  given.root = trnslurm::test::fixtures_dir() + "/neuron/trn2";
  const auto overridden = gather_node_inputs(given, node.lookups());
  REQUIRE(overridden);
  CHECK(overridden->efa.state == EfaState::present);
  CHECK(overridden->topology.instance_type == "trn2.48xlarge");

  auto bad = request();
  bad.site.root = "/trees/%x";
  REQUIRE_FALSE(gather_node_inputs(bad, node.lookups()));
}

TEST_CASE("node_inputs: the user's environment, only the variables the decision reads") {
  FakeNode node;
  node.env = {{"NEURON_RT_VISIBLE_CORES", "0-3"}, {"HOME", "/home/u"}};
  const auto in = gather_node_inputs(request(), node.lookups());
  REQUIRE(in);
  CHECK(in->user_env.size() == 1);
  CHECK(in->user_env.at("NEURON_RT_VISIBLE_CORES") == "0-3");

  auto ignore = request();
  ignore.user_env = false;
  const auto none = gather_node_inputs(ignore, node.lookups());
  REQUIRE(none);
  CHECK(none->user_env.empty());
}

TEST_CASE("node_inputs: node_name is a short host name") {
  const auto name = node_name();
  CHECK_FALSE(name.empty());
  CHECK(name.find('.') == std::string::npos);
}

TEST_CASE("node_inputs: MASTER_ADDR decided once for the job, by its batch step, is taken from there") {
  FakeNode node;
  node.env = {{"SLURM_STEP_NODELIST", "n1,n2"}};
  // The batch step's decision (what it leaves in the batch shell's environment).
  const auto batch = gather_node_inputs(request(2), node.lookups());
  REQUIRE(batch);
  CHECK(node.addr_asked == 1);
  node.env[std::string(job_master_variable)] = format_job_master(batch->master);
  // Every step started from it: no lookup, the same address, and it says so.
  node.addr_asked = 0;
  auto in = gather_node_inputs(request(2), node.lookups());
  REQUIRE(in);
  CHECK(node.addr_asked == 0);
  CHECK(in->master.address == "10.0.0.1");
  CHECK(in->master.how.starts_with("decided once for the job by its batch step"));
  // A step whose first host is another one, or a kept value that is no address, looks it up.
  node.env["SLURM_STEP_NODELIST"] = "n2";
  in = gather_node_inputs(request(1), node.lookups());
  REQUIRE(in);
  CHECK(node.addr_asked == 1);
  node.env["SLURM_STEP_NODELIST"] = "n1";
  node.env[std::string(job_master_variable)] = "n1 $(reboot) x";
  in = gather_node_inputs(request(1), node.lookups());
  REQUIRE(in);
  CHECK(node.addr_asked == 2);
  CHECK(in->master.address == "10.0.0.1");
}
