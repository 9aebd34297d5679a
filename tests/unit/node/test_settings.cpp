#include <catch2/catch.hpp>

#include "trnslurm/node/settings.hpp"

using namespace trnslurm;

TEST_CASE("settings: --trn-env takes on and off and refuses anything else") {
  CHECK(parse_env_switch("on").value() == true);
  CHECK(parse_env_switch("off").value() == false);
  for (const char* bad : {"", "ON", "yes", "off "}) {
    const auto r = parse_env_switch(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where == "--trn-env");
    CHECK_FALSE(r.error().hint.empty());
  }
}

TEST_CASE("settings: --trn-cores") {
  CHECK(parse_cores("per-node")->mode == CoreMode::per_node);
  CHECK(parse_cores("per-task")->mode == CoreMode::per_task);
  CHECK(parse_cores("auto")->mode == CoreMode::automatic);
  const auto four = parse_cores("4");
  REQUIRE(four);
  CHECK(four->mode == CoreMode::fixed);
  CHECK(four->per_task == 4);
  for (const char* bad : {"", "0", "-1", "4x", "pernode", "99999"}) {
    const auto r = parse_cores(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().where == "--trn-cores");
  }
}

TEST_CASE("settings: --trn-efa, --trn-cache, --trn-root-comm") {
  CHECK(parse_efa("on").value() == EfaMode::on);
  CHECK(parse_efa("off").value() == EfaMode::off);
  CHECK(parse_efa("auto").value() == EfaMode::automatic);
  CHECK_FALSE(parse_efa("yes"));
  CHECK(parse_cache("/fsx/cache").value() == "/fsx/cache");
  CHECK(parse_cache("s3://bucket/cache").value() == "s3://bucket/cache");
  for (const char* bad : {"", "relative/dir", "s3://", "/a\nb"}) CHECK_FALSE(parse_cache(bad));
  CHECK(parse_root_comm(std::nullopt, 46820).value() == 46820);
  CHECK(parse_root_comm("48620", 46820).value() == 48620);
  for (const char* bad : {"0", "65536", "port", "-5"}) {
    const auto r = parse_root_comm(bad, 46820);
    REQUIRE_FALSE(r);
    CHECK(r.error().where == "--trn-root-comm");
  }
}

TEST_CASE("settings: options applied twice give the same result") {
  UserOptions opts;
  for (int i = 0; i < 2; ++i) {
    REQUIRE(apply_option(opts, "trn-cores", "2", 46820));
    REQUIRE(apply_option(opts, "trn-efa", "on", 46820));
    REQUIRE(apply_option(opts, "trn-root-comm", std::nullopt, 46820));
    REQUIRE(apply_option(opts, "trn-verbose", std::nullopt, 46820));
  }
  CHECK(opts.cores == CoreMode::fixed);
  CHECK(opts.cores_per_task == 2U);
  CHECK(opts.efa == EfaMode::on);
  CHECK(opts.root_comm_port == std::uint16_t{46820});
  CHECK(opts.verbose == true);
  CHECK_FALSE(opts.preflight);
  REQUIRE(apply_option(opts, "trn-preflight", std::nullopt, 46820));
  CHECK(opts.preflight);
  CHECK_FALSE(apply_option(opts, "trn-cores", "lots", 46820));
}

TEST_CASE("settings: plugstack arguments are parsed strictly") {
  const auto site = parse_plugstack_args(
      {"root=/fake/%n", "state_dir=/run/x/%n", "cores=per-task", "efa=off", "cache=/fsx/cache",
       "cache_mode=per-host", "master_port=41000", "root_comm_port=48620", "lnc=1", "malloc_arena_max=128",
       "inflight=5", "stochastic_rounding=0", "fuse_softmax=0", "master_addr=name", "master_net=10.1.0.0/16",
       "env=on", "instances=/etc/slurm/trnslurm-instances.toml", "preflight_drain=yes"});
  REQUIRE(site);
  CHECK(site->preflight_drain);
  CHECK_FALSE(parse_plugstack_args({}).value().preflight_drain);  // draining is the site's opt-in
  CHECK_FALSE(parse_plugstack_args({"preflight_drain=no"}).value().preflight_drain);
  CHECK(site->root == "/fake/%n");
  CHECK(site->instances == "/etc/slurm/trnslurm-instances.toml");
  CHECK(parse_plugstack_args({}).value().instances.empty());
  CHECK(site->state_dir == "/run/x/%n");
  CHECK(site->defaults.cores == CoreMode::per_task);
  CHECK(site->defaults.cores_from == "plugstack.conf cores=");
  CHECK(site->defaults.efa == EfaMode::off);
  CHECK(site->defaults.cache_mode == CacheMode::per_host);
  CHECK(site->defaults.master_port == 41000);
  CHECK(site->defaults.root_comm_default_port == 48620);
  CHECK(site->defaults.lnc == 1U);
  CHECK(site->defaults.malloc_arena_max == "128");
  CHECK(site->defaults.inflight == "5");
  CHECK(site->defaults.stochastic_rounding == "0");
  CHECK_FALSE(site->defaults.resolve_master);
  CHECK(site->defaults.master_net == "10.1.0.0/16");

  for (const char* bad :
       {"colour=blue", "root", "=x", "root=relative", "root=/x/%q", "cores=many", "efa=1", "master_port=0",
        "lnc=3", "inflight=lots", "fuse_softmax=2", "master_net=10.0.0.0", "master_net=10.0.0/8",
        "cache_mode=sometimes", "master_addr=dns", "instances=site.toml", "instances=/x/%q",
        "preflight_drain=1", "preflight_drain=true"}) {
    INFO(bad);
    const auto r = parse_plugstack_args({bad});
    REQUIRE_FALSE(r);
    CHECK(r.error().where.find("trnslurm") != std::string::npos);
  }
  CHECK(parse_plugstack_args({"colour=blue"}).error().what.find("unknown argument 'colour'") !=
        std::string::npos);
}

TEST_CASE("settings: options win over plugstack defaults") {
  auto site = parse_plugstack_args({"cores=per-node", "efa=off", "cache=/site"}).value();
  UserOptions opts;
  opts.efa = EfaMode::on;
  opts.cache = "/mine";
  const auto s = merge(site, opts);
  CHECK(s.cores == CoreMode::per_node);  // no option: the site's default
  CHECK(s.efa == EfaMode::on);
  CHECK(s.efa_from == "--trn-efa");
  CHECK(s.cache == "/mine");
  CHECK_FALSE(s.root_comm_port.has_value());
}

TEST_CASE("settings: %n expands to the node name and nothing else is allowed") {
  CHECK(expand_node_pattern("/fake/%n/root", "n2").value() == "/fake/n2/root");
  CHECK(expand_node_pattern("/100%%/%n", "n1").value() == "/100%/n1");
  CHECK_FALSE(expand_node_pattern("/x/%h", "n1"));
  CHECK_FALSE(expand_node_pattern("/x/%", "n1"));
  CHECK_FALSE(expand_node_pattern("/x/%n", ".."));
  CHECK_FALSE(expand_node_pattern("/x/%n", "a/b"));
}

TEST_CASE("settings: --trn-launch takes torchrun and auto, and wins over nothing else") {
  UserOptions opts;
  REQUIRE(apply_option(opts, "trn-launch", "torchrun", 46820));
  REQUIRE(opts.launch == LaunchMode::torchrun);
  CHECK(merge(SiteSettings{}, opts).launch == LaunchMode::torchrun);
  CHECK(merge(SiteSettings{}, UserOptions{}).launch == LaunchMode::automatic);
  REQUIRE(apply_option(opts, "trn-launch", "auto", 46820));
  CHECK(opts.launch == LaunchMode::automatic);
  const auto bad = apply_option(opts, "trn-launch", "mpirun", 46820);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where == "--trn-launch");
}
