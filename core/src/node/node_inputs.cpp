#include "trnslurm/node/node_inputs.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>

#include "trnslurm/node/topology.hpp"

namespace trnslurm {

namespace {

// The step's node list and where it came from (for the error that names it).
std::optional<std::pair<std::string, std::string>> step_nodelist(const NodeRequest& request,
                                                                 const NodeLookups& lookups) {
  if (request.nodelist) return std::pair{*request.nodelist, std::string("--nodelist")};
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"}) {
    if (auto v = lookups.getenv(name); v && !v->empty()) return std::pair{std::move(*v), std::string(name)};
  }
  return std::nullopt;
}

}  // namespace

std::string node_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  std::string name(buf.data());
  if (const auto dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  return name;
}

Result<EnvInput> gather_node_inputs(const NodeRequest& request, const NodeLookups& lookups) {
  EnvInput in;
  in.settings = request.settings;
  in.task = request.task;
  in.hostname = request.hostname.empty() ? node_name() : request.hostname;

  if (request.root) {
    in.topology = read_topology(*request.root);
  } else {
    const auto root = expand_node_pattern(request.site.root, in.hostname);
    if (!root) return std::unexpected(root.error());
    in.topology = read_topology(*root);
  }
  // The node's type as the table knows it, the site's file included (docs/instances.md). A bad
  // site file is an error here: the plugin raises it in task_init, failing the job, never the node.
  const auto instances = expand_node_pattern(request.site.instances, in.hostname);
  if (!instances) return std::unexpected(instances.error());
  auto instance = read_node_instance(in.topology, *instances);
  if (!instance) return std::unexpected(instance.error());
  in.instance = std::move(*instance);
  if (request.efa) {
    in.efa = *request.efa;
  } else {
    const auto state_dir = expand_node_pattern(request.site.state_dir, in.hostname);
    if (!state_dir) return std::unexpected(state_dir.error());
    if (auto efa = read_efa_state(*state_dir))
      in.efa = std::move(*efa);
    else
      in.efa = {EfaState::unknown, to_string(efa.error())};
  }

  auto nodelist = step_nodelist(request, lookups);
  if (!nodelist && request.task.nnodes <= 1) nodelist = std::pair{in.hostname, std::string("this node")};
  if (!nodelist)
    return fail("the step's node list (SLURM_STEP_NODELIST) is missing: no MASTER_ADDR",
                "SLURM_STEP_NODELIST", "run inside a Slurm step, or give --nodelist");
  const auto host = lookups.first_host(nodelist->first);
  if (!host)
    return fail(fmt::format("cannot read node list '{}': no MASTER_ADDR", nodelist->first), nodelist->second,
                "a Slurm node list, e.g. trn[1-4]");
  // The batch step's decision for this host, when the job has one: no lookup on every node of
  // every step (only worth keeping when this node could look it up itself: resolve_master).
  const auto kept =
      in.settings.resolve_master ? lookups.getenv(std::string(job_master_variable)) : std::nullopt;
  if (auto master = kept ? parse_job_master(*kept, *host) : std::nullopt)
    in.master = std::move(*master);
  else
    in.master = find_master(*host, in.settings, lookups.node_addr);

  // The user's environment as it is before anything is set: what task_environment decides against.
  if (request.user_env) {
    for (const auto name : considered_variables()) {
      const std::string n(name);
      if (auto v = lookups.getenv(n)) in.user_env.emplace(n, std::move(*v));
    }
    if (auto mark = lookups.getenv(std::string(set_mark_variable))) separate_inherited(in, *mark);
  }
  return in;
}

}  // namespace trnslurm
