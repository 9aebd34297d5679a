#pragma once

#include <optional>
#include <string>
#include <vector>

// Lookups through libslurm that both front ends need: the plugin (where srun and slurmstepd
// provide libslurm's symbols) and `trnslurm env`/`doctor` (linked with libslurm). Not in the
// core, which has no Slurm headers.
namespace trnslurm::slurm_lookup {

// The first host of a Slurm node list, through libslurm's own hostlist parser.
std::optional<std::string> first_host(const std::string& nodelist);

// Every host of a node list, in its order ("n[1-3]" -> n1, n2, n3).
std::optional<std::vector<std::string>> hosts(const std::string& nodelist);

// Slurm's NodeAddr for a node: libslurm's slurm_conf_get_address(), which srun and slurmstepd
// carry but no public header declares. Looked up at run time so that a Slurm without it only
// loses this first choice (DNS and then the name remain), never the plugin's load.
std::optional<std::string> node_addr(const std::string& node);

}  // namespace trnslurm::slurm_lookup
