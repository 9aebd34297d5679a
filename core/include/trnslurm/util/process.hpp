#pragma once
// The one process runner: every program trnslurm starts (the CLI's sbatch, squeue, scontrol,
// python3 ..., the plugin's scontrol drain inside slurmstepd) is started here, by Boost.Process's
// default launcher (fork and exec). The one exception is the EFA probe (node/efa.cpp), which runs
// a function in a forked child rather than a program (util/child.hpp).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

struct ProcessOutput {
  int exit_code = 0;  // as a shell reports it: the exit status, or 128 + the signal that killed it
  std::string out;
  std::string err;
  int signal = 0;          // the signal that killed it; 0 when it exited
  bool timed_out = false;  // killed, with its process group, at the time limit
};

struct RunOptions {
  // Start the child in a process group of its own, so a Ctrl-C at the terminal reaches only us:
  // an sbatch in flight then finishes, and its job id is recorded and can be cancelled.
  bool own_process_group = false;
  // Zero: no limit. Otherwise the child runs in a process group of its own, and at the limit that
  // whole group (the child and whatever it started) is killed; what it wrote so far is returned.
  std::chrono::milliseconds limit{0};
  // Exactly this environment ("NAME=value" each) instead of ours.
  std::optional<std::vector<std::string>> env{};
};

// Runs `argv` (argv[0] looked up in PATH unless it holds a '/'), never through a shell: stdin
// from /dev/null, stdout and stderr read apart while it runs, no descriptor of ours inherited,
// every signal at its default and none blocked. An error only when it could not be started
// ("'x' not found in PATH", an exec failure); its own failure is in the output.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace trnslurm
