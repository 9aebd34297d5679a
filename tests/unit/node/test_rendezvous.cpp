#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <map>

#include "fixtures.hpp"
#include "trnslurm/node/rendezvous.hpp"

using namespace trnslurm;

namespace {

// A DNS that answers from a table and counts the questions.
struct FakeDns {
  std::map<std::string, std::vector<std::string>> table;
  int asked = 0;
  Resolver resolver() {
    return [this](const std::string& name) -> Result<std::vector<std::string>> {
      ++asked;
      const auto it = table.find(name);
      if (it == table.end()) return fail("Name or service not known", name);
      return it->second;
    };
  }
};

}  // namespace

TEST_CASE("rendezvous: the first routable address, and why") {
  FakeDns dns{{{"trn-1", {"127.0.1.1", "10.0.3.7"}}}};
  const auto r = choose_master("trn-1", std::nullopt, EnvSettings{}, dns.resolver());
  CHECK(r.address == "10.0.3.7");
  CHECK(r.how.find("first of 2 addresses") != std::string::npos);
}

TEST_CASE("rendezvous: master_net picks the interface on a multi-homed host") {
  EnvSettings s;
  s.master_net = "10.1.0.0/16";
  FakeDns dns{{{"trn-1", {"172.16.0.4", "10.1.2.3"}}, {"trn-2", {"172.16.0.5"}}}};
  CHECK(choose_master("trn-1", std::nullopt, s, dns.resolver()).address == "10.1.2.3");
  const auto none = choose_master("trn-2", std::nullopt, s, dns.resolver());
  CHECK(none.address == "172.16.0.5");
  CHECK(none.how.find("none of its addresses") != std::string::npos);
  // A NodeAddr outside master_net is not taken: the name's addresses are searched instead.
  CHECK(choose_master("trn-1", std::string("172.16.0.4"), s, dns.resolver()).address == "10.1.2.3");
}

TEST_CASE("rendezvous: Slurm's NodeAddr first, without asking DNS") {
  FakeDns dns{{{"n1", {"10.0.0.99"}}, {"n1-mgmt", {"10.0.5.1"}}}};
  const auto r = choose_master("n1", std::string("127.0.0.1"), EnvSettings{}, dns.resolver());
  CHECK(r.address == "127.0.0.1");
  CHECK(r.host == "n1");
  CHECK(r.how == "Slurm's NodeAddr for n1");
  CHECK(dns.asked == 0);
  // NodeAddr that is a name of its own is resolved instead of the node name.
  const auto named = choose_master("n1", std::string("n1-mgmt"), EnvSettings{}, dns.resolver());
  CHECK(named.address == "10.0.5.1");
  CHECK(named.how.find("n1-mgmt (Slurm's NodeAddr for n1) resolved to 10.0.5.1") != std::string::npos);
  // NodeAddr equal to the name (Slurm's default) adds nothing: the name is resolved.
  CHECK(choose_master("n1", std::string("n1"), EnvSettings{}, dns.resolver()).address == "10.0.0.99");
  CHECK(dns.asked == 2);
}

TEST_CASE("rendezvous: a name that resolves nowhere stays a name and says so") {
  FakeDns dns;
  const auto r = choose_master("n1", std::nullopt, EnvSettings{}, dns.resolver());
  CHECK(r.address == "n1");
  CHECK(r.how.find("does not resolve here") != std::string::npos);
  EnvSettings s;
  s.resolve_master = false;
  const auto named = choose_master("n1", std::string("10.0.0.1"), s, dns.resolver());
  CHECK(named.address == "n1");
  CHECK(named.how.find("master_addr=name") != std::string::npos);
}

TEST_CASE("rendezvous: real resolution of localhost, and NodeAddr through find_master") {
  const auto addrs = resolve_ipv4("localhost");
  REQUIRE(addrs);
  CHECK(addrs->front().starts_with("127."));
  const auto r = find_master("localhost", EnvSettings{});
  CHECK(r.address.starts_with("127."));
  CHECK(r.how.find("loopback") != std::string::npos);
  CHECK_FALSE(resolve_ipv4("no-such-host.invalid"));
  const NodeAddrLookup lookup = [](const std::string& node) -> std::optional<std::string> {
    if (node == "no-such-host.invalid") return "10.9.0.5";
    return std::nullopt;
  };
  CHECK(find_master("no-such-host.invalid", EnvSettings{}, lookup).address == "10.9.0.5");
  CHECK(find_master("localhost", EnvSettings{}, lookup).address.starts_with("127."));
}

TEST_CASE("rendezvous: networks") {
  CHECK(in_network("10.1.2.3", "10.1.0.0/16"));
  CHECK_FALSE(in_network("10.2.2.3", "10.1.0.0/16"));
  CHECK(in_network("192.168.1.1", "0.0.0.0/0"));
  CHECK(in_network("192.168.1.1", "192.168.1.1/32"));
  CHECK_FALSE(in_network("192.168.1.2", "192.168.1.1/32"));
  CHECK_FALSE(in_network("bogus", "10.0.0.0/8"));
}

namespace {

// In a child process with a network and mount namespace of its own: a resolver (127.0.0.1:53)
// that receives and never answers, named by a resolv.conf bound over /etc/resolv.conf. Returns
// what resolve_ipv4 said there, or why the stage could not be set.
std::string resolve_with_silent_dns(std::chrono::milliseconds limit) {
  int out[2];
  if (pipe(out) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    std::string said = "stage failed";
    const test::ScratchDir tmp;
    const auto conf = tmp / "resolv.conf";
    std::FILE* f = std::fopen(conf.c_str(), "w");
    const int sock = socket(AF_INET, SOCK_DGRAM, 0);
    ifreq lo{};
    std::strcpy(lo.ifr_name, "lo");
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(53);
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (f && std::fputs("nameserver 127.0.0.1\noptions timeout:30 attempts:1\n", f) >= 0 &&
        std::fclose(f) == 0 && unshare(CLONE_NEWNS | CLONE_NEWNET) == 0 &&
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        mount(conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) == 0) {
      const int ctl = socket(AF_INET, SOCK_DGRAM, 0);
      lo.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
      if (ioctl(ctl, SIOCSIFFLAGS, &lo) == 0 &&
          bind(socket(AF_INET, SOCK_DGRAM, 0), reinterpret_cast<sockaddr*>(&at), sizeof at) == 0) {
        const auto r = resolve_ipv4("trnslurm-test.example", limit);
        said = r ? "resolved" : r.error().what;
      }
    }
    (void)sock;
    (void)!write(out[1], said.data(), said.size());
    _exit(0);
  }
  close(out[1]);
  std::string said;
  std::array<char, 256> buf{};
  for (ssize_t n; (n = read(out[0], buf.data(), buf.size())) > 0;)
    said.append(buf.data(), static_cast<std::size_t>(n));
  close(out[0]);
  waitpid(pid, nullptr, 0);
  return said;
}

}  // namespace

TEST_CASE("rendezvous: a resolver that never answers costs resolve_limit, not the resolver's own timeouts") {
  if (test::skip_unless_root("a network and mount namespace of its own")) return;
  // The resolver would wait 30 s; the lookup gives up at the limit.
  CHECK(resolve_with_silent_dns(std::chrono::milliseconds(300)) ==
        "no answer from the resolver within 300 ms");
}
