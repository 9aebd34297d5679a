#pragma once
// The CLI's real Slurm client, over the one process runner (core's util/process.hpp).

#include <string>
#include <vector>

#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/util/process.hpp"

namespace trnslurm::cli {

inline CommandRunner process_runner(RunOptions options = {}) {
  return [options = std::move(options)](const std::vector<std::string>& argv) {
    return run_process(argv, options);
  };
}

// The real Slurm client: the one place the CLI makes one, to hand on to the core's steps.
inline CommandSlurmClient slurm_client(RunOptions options = {}) {
  return CommandSlurmClient(process_runner(std::move(options)));
}

}  // namespace trnslurm::cli
