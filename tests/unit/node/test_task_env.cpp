#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "fixtures.hpp"
#include "trnslurm/node/task_env.hpp"

using namespace trnslurm;

namespace {

EnvInput input(const char* tree, std::uint32_t local_id, std::uint32_t local_count, std::uint32_t node_id = 0,
               std::uint32_t nnodes = 1) {
  EnvInput in;
  in.topology = read_topology(test::fixture(std::string("neuron/") + tree));
  in.instance = node_instance(in.topology, std::nullopt).value();
  in.task.node_id = node_id;
  in.task.nnodes = nnodes;
  in.task.local_id = local_id;
  in.task.local_count = local_count;
  in.task.global_id = node_id * local_count + local_id;
  in.task.total_tasks = nnodes * local_count;
  in.efa = {EfaState::absent, "fi_getinfo(prov_name=efa): -61"};
  in.master = {"n1", "10.0.0.1", "n1 resolved to 10.0.0.1"};
  in.hostname = "n1";
  return in;
}

const EnvVar* find(const std::vector<EnvVar>& vars, std::string_view name) {
  const auto it = std::ranges::find(vars, name, &EnvVar::name);
  return it == vars.end() ? nullptr : &*it;
}

std::string value(const EnvPlan& plan, std::string_view name) {
  const auto* v = find(plan.set, name);
  return v ? v->value : "<unset>";
}

bool noted(const EnvPlan& plan, std::string_view text) {
  return std::ranges::any_of(plan.notes, [&](const auto& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("task_env: trn1 per-node gives the one task every core") {
  auto in = input("trn1", 0, 1, 1, 4);
  const auto plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "32");
  CHECK(value(*plan, "NEURON_RT_VISIBLE_CORES") == "0-31");
  CHECK(value(*plan, "TRNSLURM_NPROC_PER_NODE") == "32");
  CHECK(value(*plan, "TRNSLURM_NODE_RANK") == "1");
  CHECK(value(*plan, "TRNSLURM_NNODES") == "4");
  CHECK(value(*plan, "RANK") == "<unset>");                      // torchrun sets the workers' ranks
  CHECK(value(*plan, "NEURON_LOGICAL_NC_CONFIG") == "<unset>");  // trn1 knows only LNC=1
  CHECK(find(plan->set, "NEURON_RT_NUM_CORES")->reason.find("auto: 1 task(s)") != std::string::npos);
  CHECK(find(plan->set, "NEURON_RT_NUM_CORES")->reason.find("trn1.32xlarge") != std::string::npos);
}

TEST_CASE("task_env: trn1 per-task splits the cores between local tasks") {
  for (std::uint32_t id : {0U, 5U, 15U}) {
    auto in = input("trn1", id, 16, 1, 2);
    const auto plan = task_environment(in);
    REQUIRE(plan);
    CHECK(value(*plan, "NEURON_RT_VISIBLE_CORES") == fmt::format("{}-{}", 2 * id, 2 * id + 1));
    CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "2");
    CHECK(value(*plan, "RANK") == std::to_string(16 + id));
    CHECK(value(*plan, "WORLD_SIZE") == "32");
    CHECK(value(*plan, "LOCAL_RANK") == std::to_string(id));
    CHECK(value(*plan, "LOCAL_WORLD_SIZE") == "16");
  }
  // 32 tasks on a node: one core each, written as a single index.
  auto in = input("trn1n", 31, 32);
  CHECK(value(task_environment(in).value(), "NEURON_RT_VISIBLE_CORES") == "31");
}

TEST_CASE("task_env: a fixed number of cores per task") {
  auto in = input("trn1", 3, 4);
  in.settings.cores = CoreMode::fixed;
  in.settings.cores_per_task = 8;
  const auto plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_RT_VISIBLE_CORES") == "24-31");
  CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "8");
}

TEST_CASE("task_env: trn2 counts logical cores at LNC=2 by default, LNC=1 on request") {
  auto in = input("trn2", 0, 1);
  auto plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_LOGICAL_NC_CONFIG") == "2");
  CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "64");
  CHECK(value(*plan, "NEURON_RT_VISIBLE_CORES") == "0-63");

  in.settings.lnc = 1;
  plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_LOGICAL_NC_CONFIG") == "1");
  CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "128");

  // The user's NEURON_LOGICAL_NC_CONFIG wins over the plugstack and decides the count.
  in.user_env["NEURON_LOGICAL_NC_CONFIG"] = "2";
  plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "64");
  CHECK(find(plan->kept, "NEURON_LOGICAL_NC_CONFIG")->value == "2");

  auto per_task = input("trn2", 7, 8);
  CHECK(value(task_environment(per_task).value(), "NEURON_RT_VISIBLE_CORES") == "56-63");
}

TEST_CASE("task_env: trn3, cores per task at each LNC") {
  // 16 Trainium3 of 8 physical cores: 64 logical cores at LNC=2 (the default), 128 at LNC=1.
  auto node = input("trn3", 0, 1);
  auto plan = task_environment(node).value();
  CHECK(value(plan, "NEURON_LOGICAL_NC_CONFIG") == "2");
  CHECK(value(plan, "NEURON_RT_NUM_CORES") == "64");
  CHECK(value(plan, "NEURON_RT_VISIBLE_CORES") == "0-63");
  CHECK(find(plan.set, "NEURON_LOGICAL_NC_CONFIG")->reason.find("default for trn3.48xlarge (bundled)") !=
        std::string::npos);
  for (const std::uint32_t lnc : {1U, 2U}) {
    INFO("LNC=" << lnc);
    const std::uint32_t cores = 128 / lnc;
    for (const std::uint32_t tasks : {1U, 4U, 16U, cores}) {
      for (const std::uint32_t id : {0U, tasks - 1}) {
        auto in = input("trn3", id, tasks);
        in.settings.lnc = lnc;
        if (tasks > 1) in.settings.cores = CoreMode::per_task;
        const auto p = task_environment(in).value();
        const std::uint32_t per = cores / tasks;
        CHECK(value(p, "NEURON_LOGICAL_NC_CONFIG") == std::to_string(lnc));
        CHECK(value(p, "NEURON_RT_NUM_CORES") == std::to_string(per));
        CHECK(value(p, "NEURON_RT_VISIBLE_CORES") ==
              (per == 1 ? std::to_string(id) : fmt::format("{}-{}", id * per, id * per + per - 1)));
      }
    }
    auto too_many = input("trn3", 0, cores + 1);
    too_many.settings.lnc = lnc;
    too_many.settings.cores = CoreMode::per_task;
    CHECK_FALSE(task_environment(too_many).has_value());
  }
}

TEST_CASE("task_env: a site-defined type decides LNC and cores where no bundled type does") {
  auto in = input("trnx", 1, 4);
  // Unknown to the bundled table: LNC 1, no NEURON_LOGICAL_NC_CONFIG, cores from sysfs.
  auto plan = task_environment(in).value();
  CHECK(value(plan, "NEURON_LOGICAL_NC_CONFIG") == "<unset>");
  CHECK(value(plan, "NEURON_RT_VISIBLE_CORES") == "8-15");
  in.instance = node_instance(in.topology, InstanceFile{R"([instances."trnx.12xlarge"]
target = "trn3"
devices = 4
cores_per_device = 8
lnc = [2, 4]
lnc_default = 4
hbm_gib_per_device = 144
)",
                                                        "site.toml", InstanceOrigin::site})
                    .value();
  plan = task_environment(in).value();
  CHECK(value(plan, "NEURON_LOGICAL_NC_CONFIG") == "4");
  CHECK(value(plan, "NEURON_RT_NUM_CORES") == "2");
  CHECK(value(plan, "NEURON_RT_VISIBLE_CORES") == "2-3");
  in.settings.lnc = 1;
  const auto refused = task_environment(in);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what ==
        "LNC=1 (plugstack.conf lnc=) on a trnx.12xlarge (site) node, which supports only "
        "LNC=2 or 4");
}

TEST_CASE("task_env: EFA only with an efa provider, unless forced") {
  auto in = input("trn1", 0, 1);
  auto plan = task_environment(in).value();
  CHECK(value(plan, "FI_PROVIDER") == "<unset>");
  CHECK(value(plan, "FI_EFA_FORK_SAFE") == "<unset>");
  CHECK(noted(plan, "no efa provider (absent: fi_getinfo(prov_name=efa): -61): FI_* left alone"));

  in.efa = {EfaState::unknown, "no EFA probe result"};
  CHECK(value(task_environment(in).value(), "FI_PROVIDER") == "<unset>");

  in.efa = {EfaState::present, "fi_getinfo found the efa provider"};
  plan = task_environment(in).value();
  CHECK(value(plan, "FI_PROVIDER") == "efa");
  CHECK(value(plan, "FI_EFA_USE_DEVICE_RDMA") == "1");
  CHECK(value(plan, "FI_EFA_FORK_SAFE") == "1");

  in.settings.efa = EfaMode::off;
  in.settings.efa_from = "--trn-efa";
  plan = task_environment(in).value();
  CHECK(value(plan, "FI_PROVIDER") == "<unset>");
  CHECK(noted(plan, "EFA off (--trn-efa)"));

  in.efa = {EfaState::absent, "-61"};
  in.settings.efa = EfaMode::on;
  plan = task_environment(in).value();
  CHECK(value(plan, "FI_PROVIDER") == "efa");
  CHECK(find(plan.set, "FI_PROVIDER")->reason.find("forced on (--trn-efa)") != std::string::npos);
}

TEST_CASE("task_env: rendezvous, root comm only on request") {
  auto in = input("trn1", 0, 1);
  auto plan = task_environment(in).value();
  CHECK(value(plan, "MASTER_ADDR") == "10.0.0.1");
  CHECK(value(plan, "MASTER_PORT") == "44000");
  CHECK(value(plan, "NEURON_RT_ROOT_COMM_ID") == "<unset>");
  in.settings.root_comm_port = 46820;
  in.settings.master_port = 41000;
  plan = task_environment(in).value();
  CHECK(value(plan, "NEURON_RT_ROOT_COMM_ID") == "10.0.0.1:46820");
  CHECK(value(plan, "MASTER_PORT") == "41000");
}

TEST_CASE("task_env: runtime defaults and the compile cache") {
  auto in = input("trn1", 0, 1);
  auto plan = task_environment(in).value();
  CHECK(value(plan, "MALLOC_ARENA_MAX") == "64");
  CHECK(value(plan, "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS") == "3");
  CHECK(value(plan, "NEURON_RT_STOCHASTIC_ROUNDING_EN") == "1");
  CHECK(value(plan, "NEURON_FUSE_SOFTMAX") == "1");
  CHECK(value(plan, "NEURON_COMPILE_CACHE_URL") == "/var/tmp/neuron-compile-cache");
  in.settings.cache = "/fsx/cache";
  in.settings.cache_mode = CacheMode::per_host;
  CHECK(value(task_environment(in).value(), "NEURON_COMPILE_CACHE_URL") == "/fsx/cache/n1");
}

TEST_CASE("task_env: precedence: the user's environment > option > plugstack default") {
  auto site = parse_plugstack_args({"cache=/site", "malloc_arena_max=128"}).value();
  UserOptions opts;
  auto in = input("trn1", 0, 1);
  in.settings = merge(site, opts);
  auto plan = task_environment(in).value();
  CHECK(value(plan, "NEURON_COMPILE_CACHE_URL") == "/site");
  CHECK(find(plan.set, "NEURON_COMPILE_CACHE_URL")->reason.find("plugstack.conf cache=") !=
        std::string::npos);
  CHECK(value(plan, "MALLOC_ARENA_MAX") == "128");

  opts.cache = "/option";
  in.settings = merge(site, opts);
  plan = task_environment(in).value();
  CHECK(value(plan, "NEURON_COMPILE_CACHE_URL") == "/option");
  CHECK(find(plan.set, "NEURON_COMPILE_CACHE_URL")->reason.find("--trn-cache") != std::string::npos);

  in.user_env["NEURON_COMPILE_CACHE_URL"] = "/user";
  in.user_env["MALLOC_ARENA_MAX"] = "8";
  plan = task_environment(in).value();
  CHECK(find(plan.set, "NEURON_COMPILE_CACHE_URL") == nullptr);
  CHECK(find(plan.kept, "NEURON_COMPILE_CACHE_URL")->value == "/user");
  CHECK(find(plan.kept, "MALLOC_ARENA_MAX")->value == "8");

  // The user's own core assignment is left whole: no half-overridden pair.
  in.user_env["NEURON_RT_VISIBLE_CORES"] = "4";
  plan = task_environment(in).value();
  CHECK(value(plan, "NEURON_RT_NUM_CORES") == "<unset>");
  CHECK(noted(plan, "come from your environment"));
  // Ranks still come with one rank per task, cores or not.
  auto two = input("trn1", 1, 2);
  two.user_env["NEURON_RT_VISIBLE_CORES"] = "4";
  CHECK(value(task_environment(two).value(), "RANK") == "1");
  auto nodev = input("does-not-exist", 1, 2);
  CHECK(value(task_environment(nodev).value(), "LOCAL_RANK") == "1");
}

TEST_CASE("task_env: --trn-env=off touches nothing") {
  auto in = input("trn1", 0, 1);
  in.settings.enabled = false;
  const auto plan = task_environment(in).value();
  CHECK(plan.set.empty());
  CHECK(plan.kept.empty());
  CHECK(noted(plan, "--trn-env=off"));
}

TEST_CASE("task_env: no Neuron device: nothing about cores, unless cores were asked for") {
  auto in = input("does-not-exist", 0, 2);
  auto plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_RT_VISIBLE_CORES") == "<unset>");
  CHECK(value(*plan, "MASTER_ADDR") == "10.0.0.1");
  CHECK(noted(*plan, "no Neuron device under"));
  in.settings.cores = CoreMode::per_task;
  const auto refused = task_environment(in);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what.find("no Neuron device was found") != std::string::npos);
}

TEST_CASE("task_env: every refusal") {
  SECTION("per-node with several tasks on the node") {
    auto in = input("trn1", 0, 2);
    in.settings.cores = CoreMode::per_node;
    const auto r = task_environment(in);
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("this node runs 2 tasks") != std::string::npos);
    CHECK_FALSE(r.error().hint.empty());
  }
  SECTION("tasks x cores per task exceed the node") {
    auto in = input("trn1", 0, 3);
    in.settings.cores = CoreMode::fixed;
    in.settings.cores_per_task = 16;
    const auto r = task_environment(in);
    REQUIRE_FALSE(r);
    CHECK(r.error().what == "3 tasks x 16 cores per task need 48 NeuronCores, but this node has 32");
  }
  SECTION("more tasks than cores, per-task") {
    auto in = input("trn1", 0, 33);
    const auto r = task_environment(in);
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("33 tasks") != std::string::npos);
  }
  SECTION("LNC=2 on trn1") {
    auto in = input("trn1", 0, 1);
    in.user_env["NEURON_LOGICAL_NC_CONFIG"] = "2";
    const auto r = task_environment(in);
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("supports only LNC=1") != std::string::npos);
  }
  SECTION("a nonsense LNC in the user's environment") {
    auto in = input("trn2", 0, 1);
    in.user_env["NEURON_LOGICAL_NC_CONFIG"] = "3";
    CHECK_FALSE(task_environment(in));
  }
  SECTION("cores asked for but core_count unreadable and the node's type unknown") {
    auto in = input("partial", 0, 1);
    in.topology.instance_type.reset();
    in.topology.device_name.reset();
    in.instance = node_instance(in.topology, std::nullopt).value();
    in.settings.cores = CoreMode::per_node;
    const auto r = task_environment(in);
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("unknown") != std::string::npos);
  }
}

TEST_CASE("task_env: every variable it can set is in the list the front ends read") {
  auto in = input("trn1", 0, 2);
  in.settings.root_comm_port = 1;
  in.efa.state = EfaState::present;
  const auto plan = task_environment(in).value();
  for (const auto& v : plan.set) {
    INFO(v.name);
    if (v.name == set_mark_variable) continue;  // the mark: always replaced, never the user's
    CHECK(std::ranges::find(considered_variables(), v.name) != considered_variables().end());
  }
}

TEST_CASE("task_env: what trnslurm set for an enclosing step is decided again, the user's own is kept") {
  // The step a nested srun (or the interactive step) was started from: one task on one node.
  const auto outer = task_environment(input("trn1", 0, 1)).value();
  const auto mark = std::ranges::find(outer.set, set_mark_variable, &EnvVar::name);
  REQUIRE(mark != outer.set.end());
  CHECK(mark->per_task);
  // The inner step, 2 tasks on this node, inherits all of it; the user changed MASTER_PORT.
  auto inner = input("trn1", 0, 2);
  for (const auto& v : outer.set)
    if (v.name != set_mark_variable) inner.user_env[v.name] = v.value;
  inner.user_env["MASTER_PORT"] = "1234";
  separate_inherited(inner, mark->value);
  CHECK(inner.user_env.size() == 1);
  CHECK(inner.user_env.at("MASTER_PORT") == "1234");
  CHECK(std::ranges::find(inner.inherited, "NEURON_RT_VISIBLE_CORES") != inner.inherited.end());
  const auto plan = task_environment(inner).value();
  const auto cores = std::ranges::find(plan.set, "NEURON_RT_VISIBLE_CORES", &EnvVar::name);
  REQUIRE(cores != plan.set.end());
  CHECK(cores->value == "0-15");  // the inner step's own split, not the outer 0-31
  CHECK(std::ranges::find(plan.kept, "MASTER_PORT", &EnvVar::name) != plan.kept.end());
  // A mark naming a value the user has since changed, or garbage, takes nothing away.
  auto other = input("trn1", 0, 1);
  other.user_env["MASTER_ADDR"] = "10.0.0.9";
  separate_inherited(other, "MASTER_ADDR:0000000000000000,junk,:,MASTER_ADDR");
  CHECK(other.user_env.size() == 1);
  CHECK(other.inherited.empty());
}

TEST_CASE("task_env: only the variables marked per-task differ between the tasks of a node") {
  for (const char* tree : {"trn1", "trn2"}) {
    INFO(tree);
    const auto first = task_environment(input(tree, 0, 16, 1, 2)).value();
    for (std::uint32_t id = 1; id < 16; ++id) {
      const auto other = task_environment(input(tree, id, 16, 1, 2)).value();
      REQUIRE(other.set.size() == first.set.size());
      for (std::size_t i = 0; i < first.set.size(); ++i) {
        INFO(first.set[i].name);
        CHECK(other.set[i].name == first.set[i].name);
        CHECK(other.set[i].per_task == first.set[i].per_task);
        if (!first.set[i].per_task) CHECK(other.set[i].value == first.set[i].value);
      }
    }
    for (const char* name : {"NEURON_RT_VISIBLE_CORES", "RANK", "LOCAL_RANK"}) {
      INFO(name);
      CHECK(find(first.set, name)->per_task);
    }
  }
}

TEST_CASE("task_env: a torchrun step (--trn-launch=torchrun) gets per-node settings only") {
  auto in = input("trn2", 0, 1, 1, 2);
  in.settings.launch = LaunchMode::torchrun;
  in.settings.root_comm_port = 46820;
  const auto plan = task_environment(in);
  REQUIRE(plan);
  // One worker per logical core (LNC 2 on trn2), each taking its own core: no node-wide range.
  CHECK(value(*plan, "TRNSLURM_NPROC_PER_NODE") == "64");
  CHECK(value(*plan, "NEURON_LOGICAL_NC_CONFIG") == "2");
  CHECK(value(*plan, "NEURON_RT_VISIBLE_CORES") == "<unset>");
  CHECK(value(*plan, "NEURON_RT_NUM_CORES") == "<unset>");
  CHECK(value(*plan, "RANK") == "<unset>");
  CHECK(value(*plan, "LOCAL_RANK") == "<unset>");
  // Retired for the TorchNeuron runtime (warned about from Neuron 2.30).
  CHECK(value(*plan, "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS") == "<unset>");
  CHECK(noted(*plan, "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS not set"));
  // The node's settings stay.
  CHECK(value(*plan, "NEURON_RT_ROOT_COMM_ID") == "10.0.0.1:46820");
  CHECK(value(*plan, "MASTER_ADDR") == "10.0.0.1");
  CHECK(value(*plan, "TRNSLURM_NODE_RANK") == "1");
  CHECK(value(*plan, "TRNSLURM_NNODES") == "2");
  CHECK(value(*plan, "MALLOC_ARENA_MAX") == "64");
  // Without the option the same task keeps today's per-node decision (the legacy track).
  in.settings.launch = LaunchMode::automatic;
  const auto legacy = task_environment(in);
  REQUIRE(legacy);
  CHECK(value(*legacy, "NEURON_RT_VISIBLE_CORES") == "0-63");
  CHECK(value(*legacy, "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS") == "3");
}

TEST_CASE("task_env: a torchrun step refuses several tasks on a node, and runs on a node without devices") {
  auto in = input("trn2", 1, 2);
  in.settings.launch = LaunchMode::torchrun;
  const auto refused = task_environment(in);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().where == "--trn-launch");
  CHECK(refused.error().what.find("2 tasks") != std::string::npos);

  auto cpu = input("trn2", 0, 1);
  cpu.topology.devices.clear();
  cpu.settings.launch = LaunchMode::torchrun;
  const auto plan = task_environment(cpu);
  REQUIRE(plan);
  CHECK(value(*plan, "TRNSLURM_NPROC_PER_NODE") == "<unset>");
  CHECK(value(*plan, "MASTER_ADDR") == "10.0.0.1");
}

TEST_CASE("task_env: Neuron 2.29's runtime settings only where the site sets them") {
  auto in = input("trn2", 0, 1);
  auto plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_RT_ONE_THREAD_PER_CORE") == "<unset>");
  CHECK(value(*plan, "NEURON_RT_RANKS_PER_NETWORK_PROXY") == "<unset>");
  auto site = parse_plugstack_args({"one_thread_per_core=1", "ranks_per_network_proxy=4"});
  REQUIRE(site);
  in.settings = merge(*site, UserOptions{});
  plan = task_environment(in);
  REQUIRE(plan);
  CHECK(value(*plan, "NEURON_RT_ONE_THREAD_PER_CORE") == "1");
  CHECK(value(*plan, "NEURON_RT_RANKS_PER_NETWORK_PROXY") == "4");
  CHECK(find(plan->set, "NEURON_RT_ONE_THREAD_PER_CORE")->reason.find("plugstack") != std::string::npos);
  CHECK_FALSE(parse_plugstack_args({"one_thread_per_core=2"}));
  CHECK_FALSE(parse_plugstack_args({"ranks_per_network_proxy=x"}));
}
