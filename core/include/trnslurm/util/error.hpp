#pragma once

#include <expected>
#include <string>

namespace trnslurm {

// What kind of failure an error is, for the front ends: the CLI maps each kind to its exit code
// in one place (cli/exit_codes.cpp). An error made without one is `unclassified`, and the front
// end says what a failure of that step means (cli/output.hpp, `exit_with`).
enum class ErrorKind {
  unclassified,
  usage,        // the command line: an option missing, two that exclude each other
  input,        // what the user gave: a recipe, a dataset, a chain or stage named, a path
  slurm,        // Slurm could not be asked, or refused (sbatch, squeue, scontrol, sinfo, srun)
  upstream,     // a program or file the run depends on failed (the trainer, python, a converter)
  local,        // a file of ours could not be read, written or used; a lock could not be had
  refused,      // the command ran and the answer is no: a stage never submitted, no progress yet,
                // a compile key in use
  interrupted,  // Ctrl-C (SIGINT, SIGTERM)
  internal,     // a bug
};

// Errors are values in the core: what went wrong, where (file:line:column, file and byte
// offset, option name...), and how to fix it. The front ends decide how to print them.
struct Error {
  std::string what;
  std::string where;
  std::string hint;
  ErrorKind kind = ErrorKind::unclassified;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string what, std::string where = {}, std::string hint = {}) {
  return std::unexpected<Error>(Error{std::move(what), std::move(where), std::move(hint)});
}

inline std::unexpected<Error> fail(ErrorKind kind, std::string what, std::string where = {},
                                   std::string hint = {}) {
  return std::unexpected<Error>(Error{std::move(what), std::move(where), std::move(hint), kind});
}

// `e` with `kind` unless it already has one: a step that knows what its callees' failures mean
// (a Slurm client's command not found is a Slurm failure) without hiding a callee's own kind.
inline Error classified(Error e, ErrorKind kind) {
  if (e.kind == ErrorKind::unclassified) e.kind = kind;
  return e;
}

// "where: what (hint)" for front ends that print one line.
std::string to_string(const Error& e);

}  // namespace trnslurm
