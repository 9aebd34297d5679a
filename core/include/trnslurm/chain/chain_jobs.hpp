#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/slurm_client.hpp"

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

// Slurm states, grouped.
enum class JobPhase { pending, running, succeeded, failed, cancelled, unknown };
JobPhase phase_of(std::string_view slurm_state);
bool is_active(JobPhase p);

// One stage of a chain as the user should see it.
struct StageStatus {
  std::string name;
  std::optional<JobId> job_id;
  JobPhase phase = JobPhase::unknown;
  std::string state;  // Slurm's word, or "BLOCKED"
  std::string reason;
  std::string elapsed;
  std::string nodes;
  std::string exit_code;
  std::string note;    // "blocked: train failed", "forgotten by Slurm, last seen ..."
  std::string source;  // squeue, sacct, manifest
};

enum class ChainVerdict { succeeded, running, failed };

struct ChainStatus {
  std::vector<StageStatus> stages;
  ChainVerdict verdict = ChainVerdict::running;
  std::optional<std::size_t> failed_stage;  // the first stage that failed
  std::vector<JobId> to_cancel;             // blocked stages: cancel them
};

// What is known of one stage before asking Slurm: its name, its id if submitted, and the
// last state recorded locally (used when Slurm has forgotten the job and there is no accounting).
struct StageRef {
  std::string name;
  std::optional<JobId> job_id;
  std::string last_state;
  std::string last_exit_code;
};

// Walks the chain in order. A stage still pending after an earlier stage failed is "blocked"
// (whatever Slurm's reason says: a grandchild shows Reason=Dependency, not NeverSatisfied) and
// is to be cancelled; so is one pending with DependencyNeverSatisfied.
ChainStatus evaluate_chain(const std::vector<StageRef>& stages, const std::vector<JobRow>& squeue_rows,
                           const std::optional<std::vector<JobRow>>& sacct_rows);

// Asks Slurm (one squeue call; sacct only for ids squeue has forgotten) and evaluates.
Result<ChainStatus> query_chain(const std::vector<StageRef>& stages, SlurmClient& slurm);

// The chain's stages found by job name alone (when the local state is gone).
Result<std::vector<StageRef>> find_chain_in_slurm(std::string_view chain_id, SlurmClient& slurm);

std::string_view to_string(ChainVerdict v);
std::string_view to_string(JobPhase p);

}  // namespace trnslurm
