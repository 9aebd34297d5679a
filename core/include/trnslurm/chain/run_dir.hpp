#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/file_lock.hpp"

namespace trnslurm {

// A run directory's manifest.json: the chain, its stages and their job ids.
struct StageRecord {
  std::string name;
  std::optional<JobId> job_id;
  std::vector<std::string> sbatch_argv;
  // As last seen by `status`: a terminal state is not asked again, and an active one is what is
  // known when Slurm has forgotten the job and there is no accounting.
  std::string last_state;
  std::string last_exit_code;
  std::string last_reason;
  std::string last_elapsed;
  std::string last_nodes;
};

// Where a chain's submission stands, as manifest.json and the journal spell it: "dry-run",
// "submitting", "submitted", "rolled-back" (an sbatch failed, or Ctrl-C: every job cancelled),
// "rollback-failed" (some job could not be cancelled: status and cancel try again), "cancelled".
enum class ManifestState { dry_run, submitting, submitted, rolled_back, rollback_failed, cancelled };
std::string_view to_string(ManifestState state);
std::optional<ManifestState> parse_manifest_state(std::string_view text);

struct Manifest {
  std::string chain_id;
  std::string created;  // UTC, ISO 8601
  ManifestState state = ManifestState::submitting;
  std::filesystem::path run_dir;
  std::vector<StageRecord> stages;
  // The chain's own directories (chain/chain_dirs.hpp) and the checkpoint directory it resumed
  // from (submit --resume-from); "" in a manifest written before they were recorded.
  std::string checkpoint_dir;
  std::string converted_dir;
  std::string export_dir;
  std::string resume_from;
};

std::string manifest_to_json(const Manifest& m);
// `where` names the file in errors.
Result<Manifest> manifest_from_json(std::string_view text, const std::string& where);

// Each stage as the manifest records it, with the outcome records its jobs left in the run
// directory (chain/stage_outcome.hpp).
std::vector<StageRef> stage_refs(const Manifest& m);

// Creates <runs_dir>/<chain_id>, failing if it already exists (two submits never share one).
Result<std::filesystem::path> create_run_dir(const std::filesystem::path& runs_dir,
                                             std::string_view chain_id);

Result<void> write_manifest(const Manifest& m);
// The manifest, with the run directory's journal applied on top.
Result<Manifest> read_manifest(const std::filesystem::path& run_dir);

// The journal (<run dir>/journal): what happens to a chain after its manifest was written, one
// line appended per event ("job STAGE ID", "state STATE"). Appending costs microseconds where
// replacing manifest.json costs a disk flush (ext4 flushes a file renamed over another), and a
// crash between two sbatch calls still leaves every job id on disk.
Result<void> record_job(const std::filesystem::path& run_dir, std::string_view stage, JobId id);
Result<void> record_state(const std::filesystem::path& run_dir, ManifestState state);
// Applies journal text to a manifest; lines that do not parse (a torn last line) are skipped.
void apply_journal(Manifest& m, std::string_view journal);

// Held by `submit` from before its first sbatch until the submission's outcome is recorded: a
// lock (flock) on <run dir>/submit.lock, which the kernel drops when the process dies, however
// it dies. A chain still "submitting" without it was abandoned mid-way (kill -9, a crash).
using SubmitLock = FileLock;
Result<SubmitLock> lock_submission(const std::filesystem::path& run_dir);
// Whether a live `submit` holds the run directory's lock.
bool submission_in_progress(const std::filesystem::path& run_dir);

// The run directories under `runs_dir` holding a manifest, oldest first (chain ids sort by time).
std::vector<std::filesystem::path> list_run_dirs(const std::filesystem::path& runs_dir);

// `chain` ("" = the newest) under `runs_dir`.
Result<std::filesystem::path> find_run_dir(const std::filesystem::path& runs_dir, std::string_view chain);

}  // namespace trnslurm
