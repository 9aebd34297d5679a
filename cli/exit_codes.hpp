#pragma once
// The CLI's exit codes, documented in docs/cli.md and the man page, and the one mapping from an
// error's kind to its code.

#include "trnslurm/util/error.hpp"

namespace trnslurm::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // the command ran and the answer is "no" or "failed"
inline constexpr int exit_usage = 2;    // bad input: recipe, option, dataset
inline constexpr int exit_running =
    3;  // status/watch: the chain is still pending or running, or unknown (docs/chain.md)
inline constexpr int exit_held = 4;  // status/watch: a stage is held and waits for a person
inline constexpr int exit_internal = 70;

// usage, input: 2; slurm, upstream, local, refused, interrupted: 1; internal: 70. An unclassified error
// (a front end that forgot to say what its step's failure means) counts as a failure: 1.
int exit_code(ErrorKind kind);

}  // namespace trnslurm::cli
