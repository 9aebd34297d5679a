#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/error.hpp"
#include "trnslurm/settings.hpp"

namespace trnslurm {

// Where torchrun and the Neuron runtime meet: the first host of the step's node list (the front
// ends take it from libslurm's hostlist API) and the address every node will use for it.
struct Rendezvous {
  std::string host;     // first host of the node list
  std::string address;  // MASTER_ADDR: an IPv4 address, or the host name when it cannot be resolved
  std::string how;      // why this address (printed by --explain and --trn-verbose)
};

// getaddrinfo(host, IPv4) in resolver order, duplicates dropped.
Result<std::vector<std::string>> resolve_ipv4(const std::string& host);

// The decision, from the resolver's answer (so it is tested without DNS):
// - master_addr=name: the host name, unresolved;
// - otherwise the first address inside master_net when set (multi-homed hosts map their name to
//   several interfaces: trainium-facts.md §3), else the first non-loopback address (Debian maps
//   a host's own name to 127.0.1.1, which would send the other nodes to themselves), else the
//   loopback one;
// - a name that does not resolve here falls back to the address Slurm itself uses to reach that
//   node (slurm.conf NodeAddr, `node_addr`), resolved in turn when it is a name;
// - with neither, the name stays a name, and says so.
Rendezvous choose_master(const std::string& host, const Result<std::vector<std::string>>& resolved,
                         const EnvSettings& settings,
                         const std::optional<std::string>& node_addr = std::nullopt);

// Slurm's NodeAddr for a node name, when the front end can ask Slurm (empty when it cannot).
using NodeAddrLookup = std::function<std::optional<std::string>(const std::string& node)>;

// choose_master() over resolve_ipv4() (skipped when master_addr=name); `node_addr` is asked
// only when the name does not resolve.
Rendezvous find_master(const std::string& host, const EnvSettings& settings,
                       const NodeAddrLookup& node_addr = {});

// Whether a dotted IPv4 address lies in a CIDR network ("10.0.0.0/16").
bool in_network(std::string_view address, std::string_view cidr);

}  // namespace trnslurm
