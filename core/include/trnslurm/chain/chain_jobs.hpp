#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/chain/stage_outcome.hpp"

namespace trnslurm {

// Hooks of a submission, so the front end can record ids as they come and react to Ctrl-C.
struct SubmitHooks {
  // Called after each successful sbatch, before the next one (e.g. to record the id). An error
  // stops the chain: every job submitted so far, this one included, is cancelled.
  std::function<Result<void>(std::size_t stage, JobId id)> submitted = [](std::size_t, JobId) {
    return Result<void>{};
  };
  // Checked before each sbatch: true once the user asked to stop (SIGINT/SIGTERM).
  std::function<bool()> interrupted = [] { return false; };
  // Waits between the checks that cancelled jobs are gone.
  std::function<void(std::chrono::milliseconds)> pause = [](std::chrono::milliseconds) {};
};

// What rolling back a partial chain did.
struct Rollback {
  std::vector<JobId> cancelled;
  std::vector<JobId> remaining;  // still pending or running after the wait: should be empty
};

struct SubmitFailure {
  Error error;  // sbatch's own message, "interrupted", or the submitted hook's error
  std::size_t stage = 0;
  Rollback rollback;
};

// Submits every stage with afterok on the one before. Atomic: when an sbatch fails or the user
// interrupts, every job already submitted is cancelled and checked gone before returning.
std::expected<std::vector<JobId>, SubmitFailure> submit_chain(const ChainSpec& chain, SlurmClient& slurm,
                                                              const SubmitHooks& hooks = {});

// Cancels `ids` and waits (through `pause`, up to `timeout`) until none is pending or running.
Result<Rollback> cancel_jobs(const std::vector<JobId>& ids, SlurmClient& slurm,
                             const std::function<void(std::chrono::milliseconds)>& pause,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Rolls back what a submission that failed with `why` had submitted: cancel_jobs, tried again a
// second apart (scancel itself fails while slurmctld is busy or restarting). When cancelling never
// works, every id is `remaining` and `why`'s hint says so.
Rollback roll_back_jobs(const std::vector<JobId>& ids, SlurmClient& slurm,
                        const std::function<void(std::chrono::milliseconds)>& pause, Error& why);

// Slurm states, grouped. A held job (JobHeldUser, JobHeldAdmin, JobHoldMaxRequeue, "launch failed
// requeued held") waits for a person, not for Slurm: it is `held`, not `pending`.
enum class JobPhase { pending, running, held, succeeded, failed, cancelled, unknown };
JobPhase phase_of(std::string_view slurm_state);
// The phase of a job as squeue or sacct shows it: its state, and its reason for a held one.
JobPhase phase_of(const JobRow& row);
// Whether a pending job's reason says it is held (by its user, an administrator or Slurm).
bool is_held_reason(std::string_view reason);
// Still in the queue: pending, running or held.
bool is_active(JobPhase p);
// Ended, and never to change again: succeeded, failed or cancelled.
bool is_terminal(JobPhase p);

// One stage of a chain as the user should see it.
struct StageStatus {
  std::string name;
  std::optional<JobId> job_id;
  JobPhase phase = JobPhase::unknown;
  std::string state;  // Slurm's word, or "BLOCKED", "UNKNOWN", "NOT_SUBMITTED"
  std::string reason;
  std::string elapsed;
  std::string nodes;
  std::string exit_code;
  std::string note;  // "blocked: train failed", "forgotten by Slurm; completed: ...", "held: ..."
  // squeue, sacct, manifest (recorded by an earlier status), record (the job's own outcome
  // record, stage_outcome.hpp), inferred
  std::string source;
  std::string host;  // from the job's record: where its last attempt ran ("" = not known)
};

// succeeded: every stage COMPLETED. failed: a failure was seen (a stage FAILED, CANCELLED,
// TIMEOUT, ... or a dependent says DependencyNeverSatisfied). held: a stage waits for a person.
// unknown: Slurm forgot how a stage ended and nothing tells. running: none of these.
enum class ChainVerdict { succeeded, running, failed, held, unknown };

struct ChainStatus {
  std::vector<StageStatus> stages;
  ChainVerdict verdict = ChainVerdict::running;
  std::optional<std::size_t> failed_stage;   // the first stage seen failing
  std::optional<std::size_t> held_stage;     // the first held stage
  std::optional<std::size_t> unknown_stage;  // the first stage whose end nothing tells
  std::vector<JobId> to_cancel;              // blocked stages: cancel them
  // With an unknown verdict and a run directory: what is known of unknown_stage instead
  // (refresh_status gathers it; evaluate_chain does not read files).
  std::optional<StageEvidence> evidence;
};

// Whether asking Slurm again can change the verdict without anyone acting: the chain runs, or
// its verdict is unknown while a stage is still queued (its start would tell).
bool may_change(const ChainStatus& status);
// The worst verdict of several chains, the one a command that shows them all exits with: failed,
// then held, then unknown, then running, then succeeded (also for none).
ChainVerdict worst_verdict(const std::vector<ChainStatus>& statuses);

// What is known of one stage before asking Slurm: its name, its id if submitted, what an earlier
// status recorded of it (a terminal state is not asked again; a forgotten job without accounting
// falls back on it) and the outcome records its jobs wrote (read with the manifest, stage_refs).
struct StageRef {
  std::string name;
  std::optional<JobId> job_id;
  std::string last_state;
  std::string last_exit_code;
  std::string last_reason;
  std::string last_elapsed;
  std::string last_nodes;
  std::vector<OutcomeRecord> outcomes;
};

// Walks the chain in order. Only a failure seen is a failure: a stage still pending after an
// earlier stage failed is "blocked" (whatever Slurm's reason says: a grandchild shows
// Reason=Dependency, not NeverSatisfied) and is to be cancelled; so is one pending with
// DependencyNeverSatisfied. A stage Slurm forgot (MinJobAge) with nothing recorded of its end
// completed if a later stage started or pends for a reason other than its dependency (afterok),
// failed if its dependent says DependencyNeverSatisfied, and is unknown otherwise: never a
// failure, and nothing behind it is cancelled.
// Slurm's view wins while it has one (squeue, sacct, then what an earlier status saw ended);
// only a job Slurm no longer knows is read from its own outcome record, the one of its highest
// attempt: completed is COMPLETED, failed or signalled FAILED with its exit code, and an attempt
// that never recorded its end (killed) or requeued itself with no later attempt recorded is
// UNKNOWN, left to the stages after it as above.
ChainStatus evaluate_chain(const std::vector<StageRef>& stages, const std::vector<JobRow>& squeue_rows,
                           const std::optional<std::vector<JobRow>>& sacct_rows);

// The ids to ask Slurm about: submitted, and not recorded in a terminal state.
std::vector<JobId> ids_to_ask(const std::vector<StageRef>& stages);

// Asks Slurm (one squeue call; sacct only for ids squeue has forgotten) and evaluates.
Result<ChainStatus> query_chain(const std::vector<StageRef>& stages, SlurmClient& slurm);
// The same for several chains at once: still one squeue call (and at most one sacct) in all.
Result<std::vector<ChainStatus>> query_chains(const std::vector<std::vector<StageRef>>& chains,
                                              SlurmClient& slurm);

// The chain's stages found by job name alone (when the local state is gone).
Result<std::vector<StageRef>> find_chain_in_slurm(std::string_view chain_id, SlurmClient& slurm);

std::string_view to_string(ChainVerdict v);
std::string_view to_string(JobPhase p);

}  // namespace trnslurm
