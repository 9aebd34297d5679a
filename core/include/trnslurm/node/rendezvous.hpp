#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/node/settings.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// Where torchrun and the Neuron runtime meet: the first host of the step's node list (the front
// ends take it from libslurm's hostlist API) and the address every node will use for it.
struct Rendezvous {
  std::string host;     // first host of the node list
  std::string address;  // MASTER_ADDR: an IPv4 address, or the host name when it cannot be resolved
  std::string how;      // why this address (printed by --explain and --trn-verbose)
};

// getaddrinfo(host, IPv4) in resolver order, duplicates dropped, waiting `limit` at most: a
// resolver that does not answer (a DNS server down) must not hold up every step's start. The
// lookup runs in glibc's asynchronous resolver (getaddrinfo_a); one still running at the limit is
// abandoned, its memory left to it.
inline constexpr std::chrono::milliseconds resolve_limit{2000};
Result<std::vector<std::string>> resolve_ipv4(const std::string& host,
                                              std::chrono::milliseconds limit = resolve_limit);

using Resolver = std::function<Result<std::vector<std::string>>(const std::string& name)>;

// The decision, in this order (docs/plugin.md, "Rendezvous"):
// 1. master_addr=name: the host name, unresolved.
// 2. Slurm's own NodeAddr for the host (slurm.conf), when it is an IPv4 address (inside
//    master_net when that is set): the address Slurm itself reaches the node at, and no DNS
//    lookup on every node at every step.
// 3. Otherwise the resolver's answer for NodeAddr (when it is a name of its own) or the host
//    name: the first address inside master_net when set (multi-homed hosts map their name to
//    several interfaces), else the first non-loopback one (Debian maps a
//    host's own name to 127.0.1.1, which would send the other nodes to themselves), else the
//    loopback one.
// 4. A name that resolves nowhere stays a name, and says so.
// `resolve` is a parameter so that tests decide what DNS answers and see when it is asked.
Rendezvous choose_master(const std::string& host, const std::optional<std::string>& node_addr,
                         const EnvSettings& settings, const Resolver& resolve);

// Slurm's NodeAddr for a node name, when the front end can ask Slurm (nullopt when it cannot).
using NodeAddrLookup = std::function<std::optional<std::string>(const std::string& node)>;

// The decision kept for the whole job: the batch step (once per job, on the job's first node)
// decides MASTER_ADDR for the job's first host and leaves it in the batch shell's environment as
// TRNSLURM_JOB_MASTER ("HOST ADDRESS HOW"); every step started from it whose first host is that
// host takes it from there, without asking Slurm or DNS again on each of its nodes.
inline constexpr std::string_view job_master_variable = "TRNSLURM_JOB_MASTER";
std::string format_job_master(const Rendezvous& r);
// The kept decision when it is for `host`, with how it was reached.
std::optional<Rendezvous> parse_job_master(std::string_view text, const std::string& host);

// choose_master() with the real resolver.
Rendezvous find_master(const std::string& host, const EnvSettings& settings,
                       const NodeAddrLookup& node_addr = {});

// Whether a dotted IPv4 address lies in a CIDR network ("10.0.0.0/16").
bool in_network(std::string_view address, std::string_view cidr);

}  // namespace trnslurm
