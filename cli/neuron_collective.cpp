#include "neuron_collective.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <future>
#include <optional>
#include <ranges>
#include <string_view>

#include "process.hpp"
#include "slurm_lookup.hpp"
#include "trnslurm/health/collective.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::cli {

namespace {

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

// A port no socket here uses now, from the kernel: a fixed choice can meet a port the kernel gave
// an outgoing connection (the ephemeral range). Another host may differ, but any choice guesses.
std::optional<std::uint16_t> free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof addr;
  std::optional<std::uint16_t> port;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// The tool to run: TRNSLURM_NCCOM_TEST, else nccom-test on PATH; nullopt when there is none.
std::optional<std::string> nccom_tool() {
  const auto name = env_or("TRNSLURM_NCCOM_TEST", "nccom-test");
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? std::optional(name) : std::nullopt;
  const std::string path = env_or("PATH", "/usr/bin:/bin");
  for (const auto dir : std::views::split(path, ':')) {
    const auto candidate = std::string(std::string_view(dir)) + "/" + name;
    if (!std::string_view(dir).empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// nccom-test across `hosts`: MPI execution (--hosts) with NEURON_RT_ROOT_COMM_ID at the first
// host, as its record says; `run` numbers the runs of one job, for a port of their own when the
// kernel gives none. 32 MiB (its default size) of fp32, few iterations: the check looks for a node far below
// the rest, not for the last percent.
health::NccomResult run_nccom(const std::string& tool, const std::vector<std::string>& hosts,
                              std::uint32_t ranks_per_node, std::uint64_t run) {
  const auto job = parse_number<std::uint64_t>(env_or("SLURM_JOB_ID", "0")).value_or(0);
  const std::uint64_t port = free_port().value_or(40000 + ((job * 64) + run) % 20000);
  const auto addr = slurm_lookup::node_addr(hosts.front()).value_or(hosts.front());
  std::vector<std::string> argv{"env",
                                fmt::format("NEURON_RT_ROOT_COMM_ID={}:{}", addr, port),
                                tool,
                                "-r",
                                std::to_string(ranks_per_node * hosts.size()),
                                "-N",
                                std::to_string(hosts.size()),
                                "-d",
                                "fp32",
                                "-n",
                                "3",
                                "-w",
                                "1",
                                "--non-interactive",
                                "allr",
                                "--hosts"};
  argv.insert(argv.end(), hosts.begin(), hosts.end());
  const auto ran = run_process(argv);
  if (!ran) return {{}, std::nullopt, {ran.error().what}};
  auto result = health::parse_nccom_output(ran->out);
  if (!result.ok() && result.rows.empty() && !ran->err.empty())
    result.failures.push_back(ran->err.substr(0, ran->err.find('\n')));
  return result;
}

}  // namespace

std::vector<health::NodeReport> neuron_collective(const std::vector<std::string>& nodes,
                                                  const NodeInstance& instance, const Topology& topology,
                                                  const std::string& job_nodes) {
  std::vector<health::NodeReport> out;
  out.reserve(nodes.size());
  if (nodes.size() < 2) {
    for (const auto& n : nodes)
      out.push_back(
          {n, {{"collective", health::Status::ok, "one node: no collective across nodes"}}, job_nodes});
    return out;
  }
  const std::uint32_t lnc = instance.type ? instance.type->lnc_default.value.value_or(1) : 1;
  const std::uint32_t ranks =
      std::max<std::uint32_t>(physical_cores(topology, instance).value_or(1) / lnc, 1);
  const auto expected = instance.type ? health::expected_busbw(*instance.type) : std::nullopt;
  const auto tool = nccom_tool();
  if (!tool) {
    // Not the nodes' fault: a FAIL here would exclude every node of the job.
    for (const auto& n : nodes)
      out.push_back({n,
                     {{"collective", health::Status::warn,
                       "nccom-test not found on PATH (it comes with the Neuron tools, aws-neuronx-tools; or "
                       "name it with TRNSLURM_NCCOM_TEST): the collective did not run"}},
                     job_nodes});
    return out;
  }
  const auto whole = run_nccom(*tool, nodes, ranks, 0);
  std::vector<health::NccomResult> pairs;
  if (health::needs_pairs(whole, expected, nodes.size())) {
    pairs.resize(nodes.size());
    for (const auto& round : health::ring_rounds(nodes.size())) {
      std::vector<std::future<health::NccomResult>> running;
      running.reserve(round.size());
      for (const auto e : round)
        running.push_back(std::async(std::launch::async, run_nccom, *tool,
                                     std::vector<std::string>{nodes[e], nodes[(e + 1) % nodes.size()]}, ranks,
                                     e + 1));
      for (std::size_t i = 0; i < round.size(); ++i) pairs[round[i]] = running[i].get();
    }
  }
  const auto findings = health::judge_collective(nodes, whole, expected, pairs);
  for (std::size_t i = 0; i < nodes.size(); ++i) out.push_back({nodes[i], {findings[i]}, job_nodes});
  return out;
}

}  // namespace trnslurm::cli
