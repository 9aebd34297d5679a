#pragma once

#include <string>
#include <vector>

#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::cli {

struct RunOptions {
  // Start the child in a process group of its own, so a Ctrl-C at the terminal reaches only us:
  // an sbatch in flight then finishes, and its job id is recorded and can be cancelled.
  bool own_process_group = false;
};

// Runs `argv` (argv[0] looked up in PATH unless it is a path), capturing stdout and stderr. The only place
// that starts subprocesses (posix_spawn), never through a shell.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv, RunOptions options = {});

inline CommandRunner process_runner(RunOptions options = {}) {
  return [options](const std::vector<std::string>& argv) { return run_process(argv, options); };
}

// The real Slurm client: the one place the CLI makes one, to hand on to the core's steps.
inline CommandSlurmClient slurm_client(RunOptions options = {}) {
  return CommandSlurmClient(process_runner(options));
}

}  // namespace trnslurm::cli
