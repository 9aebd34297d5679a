#pragma once
// `submit` as one step (docs/chain.md): a planned recipe becomes a run directory and a chain of
// jobs, or a dry run of them, all or nothing. The front end parses the command line, builds the
// Slurm client, calls submit_chain_of_recipe and prints what it returns.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <expected>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "trnslurm/cache/precompile_decision.hpp"
#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/submit/submit_cache.hpp"
#include "trnslurm/util/template.hpp"

namespace trnslurm {

// What the command line asks of a submit, beside the recipe and its plan.
struct SubmitRequest {
  std::filesystem::path runs_dir;  // absolute: the run directory is created under it
  std::string resume_from;         // a chain id, its run directory or a checkpoint directory; "" = none
  StageSelection selection;
  // Over the recipe's [slurm] settings when not empty.
  std::string partition;
  std::string account;
  std::string qos;
  std::optional<bool> exclusive;
  std::vector<std::string> sbatch_args;  // for every stage
  std::vector<std::string> stage_args;   // STAGE=ARG, for one stage
  PrecompileMode precompile = PrecompileMode::automatic;
  bool dry_run = false;  // write the run directory, submit nothing
  TemplateValues site;   // backend_dir, trnslurm_bin: where this installation is
};

// What the workflow takes from its surroundings besides Slurm: the clock and randomness of the
// chain id, Ctrl-C, how to wait, and where notices go as they happen (the front end prints them;
// a notice given before a failure is still shown).
struct SubmitContext {
  std::function<std::chrono::system_clock::time_point()> now = [] {
    return std::chrono::system_clock::now();
  };
  // arc4random rather than std::random_device, whose start-up probes the CPU with cpuid, which
  // traps to the hypervisor on a virtual machine.
  std::function<std::uint32_t()> random = [] { return ::arc4random(); };
  std::function<bool()> interrupted = [] { return false; };
  std::function<void(std::chrono::milliseconds)> pause = [](std::chrono::milliseconds d) {
    std::this_thread::sleep_for(d);
  };
  std::function<void(const ResumeSource&)> resuming = [](const ResumeSource&) {};
  std::function<void(const Error&)> warning = [](const Error&) {};
};

enum class SubmitKind {
  submitted,          // every stage is in the queue, the run directory says "submitted"
  dry_run,            // the run directory is written (state "dry-run"), nothing was submitted
  nothing_to_submit,  // the only selected stage was a precompile the compile cache leaves out
};

struct SubmitOutcome {
  SubmitKind kind = SubmitKind::submitted;
  ChainSpec chain;
  ChainDirs dirs;
  Manifest manifest;                 // as written, with the job ids
  std::vector<JobId> ids;            // one per stage of `chain`; none for a dry run
  std::optional<SubmitCache> cache;  // the compile-cache decision, its lock released
  std::string cache_note;            // "compile key <hex>: ..." once recorded; "" without a cache
  // What could not be recorded once the chain was in the queue; the chain runs all the same
  // (the compile cache's record of it: only a later chain of the key may then compile beside it).
  std::vector<Error> problems;
};

struct SubmitError {
  // How the submit failed, which the exit code follows (it is the submit's, whatever its callee's):
  // input (the recipe, an option or a directory a live chain uses: nothing was created), slurm
  // (Slurm could not be asked, or an sbatch failed: nothing is left queued), local (a file could
  // not be written, the run directory or a lock could not be had), interrupted (Ctrl-C during the
  // submission: nothing is left queued), internal (an exception: a bug; what was submitted was
  // cancelled all the same).
  ErrorKind kind = ErrorKind::input;
  Error error;
  // Set once the run directory exists: the chain, and whether any sbatch was run for it.
  std::string chain_id;
  bool submission_started = false;
  Rollback rollback;            // what rolling back did: cancelled, and still queued (should be none)
  std::vector<Error> problems;  // what could not be recorded or cleaned up on the way out
};

// The whole submit. Before the first sbatch: the --resume-from source, the compile cache's
// decision, a fresh chain id (retried on a collision of run directories), the checkpoint
// directory no live chain uses, the upstream files the stages run (a dry run only warns), the
// rendered chain with the request's Slurm settings, the run directory and its submit lock.
// A failure there leaves nothing: a run directory already made is removed. Once the first sbatch
// has run, any failure, error value or exception, cancels every job submitted for the chain and
// records it rolled back (rollback-failed when a job could not be cancelled).
std::expected<SubmitOutcome, SubmitError> submit_chain_of_recipe(const Recipe& recipe, const Plan& plan,
                                                                 const SubmitRequest& request,
                                                                 SlurmClient& slurm,
                                                                 const SubmitContext& context = {});

}  // namespace trnslurm
