#pragma once
// One node's inputs to task_environment(), gathered by one function for the plugin (user_init)
// and `trnslurm env`, so that env prints what the plugin sets: root, state_dir and instances
// expanded for this node, its Neuron topology and instance type (the site's instances file
// included), the slurmd's EFA answer, the step's node list and its first host, MASTER_ADDR, and
// the user's environment. What the core cannot see itself comes in as
// lookups, which each front end answers its own way (spank_getenv and libslurm in slurmstepd;
// getenv, flags and libslurm on a login node).

#include <functional>
#include <optional>
#include <string>

#include "trnslurm/node/efa.hpp"
#include "trnslurm/node/rendezvous.hpp"
#include "trnslurm/node/settings.hpp"
#include "trnslurm/node/task_env.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
using NodeListLookup = std::function<std::optional<std::string>(const std::string& nodelist)>;

struct NodeLookups {
  EnvLookup getenv;           // the job's environment (the plugin), the caller's (`env`)
  NodeListLookup first_host;  // the first host of a Slurm node list (libslurm's hostlist parser)
  NodeAddrLookup node_addr;   // Slurm's NodeAddr for a node, when the front end can ask
};

struct NodeRequest {
  SiteSettings site;                    // plugstack.conf: root=, state_dir=, instances=, defaults
  EnvSettings settings;                 // merge(site, the user's options)
  TaskContext task;                     // the step's shape and this task's place in it
  std::string hostname;                 // this node's name ("" = node_name()): %n, the cache
  std::optional<std::string> nodelist;  // given outright (`env --nodelist`); else from the environment
  std::optional<std::string> root;      // the topology read here instead of under site.root
  std::optional<EfaProbe> efa;          // the EFA answer given outright (`env --probe-efa`)
  bool user_env = true;                 // read the user's environment (`env --ignore-env`: no)
};

// The inputs, or the first thing that stops them (a bad %n expansion, an unreadable node list).
// The node list is the one given, else SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST; a
// one-node step without any is this node alone.
Result<EnvInput> gather_node_inputs(const NodeRequest& request, const NodeLookups& lookups);

// This host's short name (gethostname up to the first dot): what %n stands for on this node.
std::string node_name();

}  // namespace trnslurm
