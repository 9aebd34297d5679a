#include <catch2/catch.hpp>

#include "trnslurm/rendezvous.hpp"

using namespace trnslurm;

TEST_CASE("rendezvous: the first routable address, and why") {
  EnvSettings s;
  const auto r = choose_master("trn-1", std::vector<std::string>{"127.0.1.1", "10.0.3.7"}, s);
  CHECK(r.address == "10.0.3.7");
  CHECK(r.how.find("first of 2 addresses") != std::string::npos);
}

TEST_CASE("rendezvous: master_net picks the interface on a multi-homed host") {
  EnvSettings s;
  s.master_net = "10.1.0.0/16";
  CHECK(choose_master("trn-1", std::vector<std::string>{"172.16.0.4", "10.1.2.3"}, s).address == "10.1.2.3");
  const auto none = choose_master("trn-1", std::vector<std::string>{"172.16.0.4"}, s);
  CHECK(none.address == "172.16.0.4");
  CHECK(none.how.find("none of its addresses") != std::string::npos);
}

TEST_CASE("rendezvous: a name that does not resolve stays a name and says so") {
  EnvSettings s;
  const auto r = choose_master("n1", fail("Name or service not known", "n1"), s);
  CHECK(r.address == "n1");
  CHECK(r.how.find("does not resolve here") != std::string::npos);
  s.resolve_master = false;
  const auto named = find_master("n1", s);
  CHECK(named.address == "n1");
  CHECK(named.how.find("master_addr=name") != std::string::npos);
}

TEST_CASE("rendezvous: an unresolvable name falls back to Slurm's NodeAddr") {
  EnvSettings s;
  const auto r = choose_master("n1", fail("Name or service not known", "n1"), s, std::string("10.9.0.4"));
  CHECK(r.address == "10.9.0.4");
  CHECK(r.host == "n1");
  CHECK(r.how.find("Slurm's NodeAddr for it is 10.9.0.4") != std::string::npos);
  // NodeAddr equal to the name adds nothing: the name stays.
  CHECK(choose_master("n1", fail("x", "n1"), s, std::string("n1")).address == "n1");
  // NodeAddr given as a name is resolved in turn.
  const auto via = choose_master("n1", fail("x", "n1"), s, std::string("localhost"));
  CHECK(via.address.starts_with("127."));
  CHECK(via.how.find("through Slurm's NodeAddr") != std::string::npos);
  // find_master asks Slurm only when the name does not resolve.
  int asked = 0;
  const NodeAddrLookup lookup = [&](const std::string&) -> std::optional<std::string> {
    ++asked;
    return "10.9.0.5";
  };
  CHECK(find_master("no-such-host.invalid", s, lookup).address == "10.9.0.5");
  CHECK(asked == 1);
  CHECK(find_master("localhost", s, lookup).address.starts_with("127."));
  CHECK(asked == 1);
}

TEST_CASE("rendezvous: real resolution of localhost") {
  const auto addrs = resolve_ipv4("localhost");
  REQUIRE(addrs);
  CHECK(addrs->front().starts_with("127."));
  const auto r = find_master("localhost", EnvSettings{});
  CHECK(r.address.starts_with("127."));
  CHECK(r.how.find("loopback") != std::string::npos);
  CHECK_FALSE(resolve_ipv4("no-such-host.invalid"));
}

TEST_CASE("rendezvous: networks") {
  CHECK(in_network("10.1.2.3", "10.1.0.0/16"));
  CHECK_FALSE(in_network("10.2.2.3", "10.1.0.0/16"));
  CHECK(in_network("192.168.1.1", "0.0.0.0/0"));
  CHECK(in_network("192.168.1.1", "192.168.1.1/32"));
  CHECK_FALSE(in_network("192.168.1.2", "192.168.1.1/32"));
  CHECK_FALSE(in_network("bogus", "10.0.0.0/8"));
}
