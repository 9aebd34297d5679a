#include "trnslurm/node/rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

namespace {

std::optional<std::uint32_t> parse_ipv4(std::string_view text) {
  in_addr addr{};
  const std::string s(text);
  if (inet_pton(AF_INET, s.c_str(), &addr) != 1) return std::nullopt;
  return ntohl(addr.s_addr);
}

bool is_loopback(std::string_view address) {
  const auto a = parse_ipv4(address);
  return a && (*a >> 24) == 127;
}

struct FreeAddrinfo {
  void operator()(addrinfo* ai) const noexcept { freeaddrinfo(ai); }
};

}  // namespace

bool in_network(std::string_view address, std::string_view cidr) {
  const auto slash = cidr.find('/');
  if (slash == std::string_view::npos) return false;
  const auto net = parse_ipv4(cidr.substr(0, slash));
  const auto addr = parse_ipv4(address);
  const auto bits = parse_number<std::uint32_t>(cidr.substr(slash + 1));
  if (!net || !addr || !bits || *bits > 32) return false;
  const std::uint32_t mask = *bits == 0 ? 0U : ~std::uint32_t{0} << (32U - *bits);
  return (*addr & mask) == (*net & mask);
}

Result<std::vector<std::string>> resolve_ipv4(const std::string& host, std::chrono::milliseconds limit) {
  // Everything the asynchronous lookup reads or writes, in one block: abandoned to it when it is
  // still running at the limit.
  struct Lookup {
    std::string name;
    addrinfo hints{};
    gaicb request{};
  };
  auto lookup = std::make_unique<Lookup>();
  lookup->name = host;
  lookup->hints.ai_family = AF_INET;
  lookup->hints.ai_socktype = SOCK_STREAM;
  lookup->request.ar_name = lookup->name.c_str();
  lookup->request.ar_request = &lookup->hints;
  gaicb* requests[] = {&lookup->request};
  if (const int rc = getaddrinfo_a(GAI_NOWAIT, requests, 1, nullptr); rc != 0)
    return fail(gai_strerror(rc), host);
  const gaicb* const pending[] = {&lookup->request};
  // gai_suspend returns early on a signal or another lookup's end: wait again until the limit.
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (gai_error(&lookup->request) == EAI_INPROGRESS) {
    const auto left =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    const timespec wait{static_cast<time_t>(left.count() / 1'000'000'000),
                        static_cast<long>(left.count() % 1'000'000'000)};
    gai_suspend(pending, 1, &wait);
  }
  int rc = gai_error(&lookup->request);
  if (rc == EAI_INPROGRESS && gai_cancel(&lookup->request) != EAI_ALLDONE) {
    (void)lookup.release();  // still running: the resolver's thread owns it now
    return fail(fmt::format("no answer from the resolver within {} ms", limit.count()), host);
  }
  rc = gai_error(&lookup->request);
  std::unique_ptr<addrinfo, FreeAddrinfo> list(lookup->request.ar_result);
  if (rc != 0) return fail(gai_strerror(rc), host);
  std::vector<std::string> out;
  for (const addrinfo* ai = list.get(); ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET || !ai->ai_addr) continue;
    sockaddr_in sin{};
    std::memcpy(&sin, ai->ai_addr, sizeof sin);
    std::array<char, INET_ADDRSTRLEN> text{};
    if (!inet_ntop(AF_INET, &sin.sin_addr, text.data(), text.size())) continue;
    std::string a(text.data());
    if (std::ranges::find(out, a) == out.end()) out.push_back(std::move(a));
  }
  if (out.empty()) return fail("no IPv4 address", host);
  return out;
}

Rendezvous choose_master(const std::string& host, const std::optional<std::string>& node_addr,
                         const EnvSettings& settings, const Resolver& resolve) {
  if (!settings.resolve_master)
    return {host, host, "the first node's name, unresolved (plugstack master_addr=name)"};
  const bool addr_given = node_addr && !node_addr->empty() && *node_addr != host;
  if (addr_given && parse_ipv4(*node_addr) &&
      (!settings.master_net || in_network(*node_addr, *settings.master_net)))
    return {host, *node_addr, fmt::format("Slurm's NodeAddr for {}", host)};

  const std::string& name = addr_given && !parse_ipv4(*node_addr) ? *node_addr : host;
  const std::string via = name == host ? host : fmt::format("{} (Slurm's NodeAddr for {})", name, host);
  const auto resolved = resolve(name);
  if (!resolved)
    return {host, host,
            fmt::format("{} does not resolve here ({}) and Slurm gave no address: the name itself, for torch "
                        "to resolve on each node",
                        via, resolved.error().what)};
  const auto& addrs = *resolved;
  if (settings.master_net) {
    for (const auto& a : addrs) {
      if (in_network(a, *settings.master_net))
        return {host, a, fmt::format("{} resolved to {} in master_net {}", via, a, *settings.master_net)};
    }
  }
  const auto routable = std::ranges::find_if(addrs, [](const auto& a) { return !is_loopback(a); });
  const std::string& pick = routable != addrs.end() ? *routable : addrs.front();
  std::string how = fmt::format("{} resolved to {}", via, pick);
  if (settings.master_net)
    how += fmt::format(" (none of its addresses is in master_net {})", *settings.master_net);
  else if (addrs.size() > 1)
    how += fmt::format(" (first of {} addresses; plugstack master_net=CIDR picks the right network)",
                       addrs.size());
  if (is_loopback(pick)) how += " (loopback: only right when every node is this machine)";
  return {host, pick, std::move(how)};
}

std::string format_job_master(const Rendezvous& r) {
  std::string how = r.how;
  std::ranges::replace(how, '\n', ' ');
  return fmt::format("{} {} {}", r.host, r.address, how);
}

std::optional<Rendezvous> parse_job_master(std::string_view text, const std::string& host) {
  const auto a = text.find(' ');
  if (a == std::string_view::npos || text.substr(0, a) != host) return std::nullopt;
  const auto b = text.find(' ', a + 1);
  const auto address = text.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1);
  // An address, or the host name itself (a name nothing resolved): never anything else.
  if (address.empty() || (!parse_ipv4(address) && address != host)) return std::nullopt;
  const auto how = b == std::string_view::npos ? std::string_view{} : text.substr(b + 1);
  return Rendezvous{
      host, std::string(address),
      fmt::format("decided once for the job by its batch step ({}): {}", job_master_variable, how)};
}

Rendezvous find_master(const std::string& host, const EnvSettings& settings,
                       const NodeAddrLookup& node_addr) {
  const Resolver resolve_ipv4 = [](const std::string& name) { return trnslurm::resolve_ipv4(name); };
  if (!settings.resolve_master) return choose_master(host, std::nullopt, settings, resolve_ipv4);
  return choose_master(host, node_addr ? node_addr(host) : std::nullopt, settings, resolve_ipv4);
}

}  // namespace trnslurm
