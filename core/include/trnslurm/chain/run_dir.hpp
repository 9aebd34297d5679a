#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// A run directory's manifest.json: the chain, its stages and their job ids.
struct StageRecord {
  std::string name;
  std::optional<JobId> job_id;
  std::vector<std::string> sbatch_argv;
  std::string last_state;  // as last seen by `status`, for when Slurm has forgotten the job
  std::string last_exit_code;
};

// Where a chain's submission stands, as manifest.json and the journal spell it: "dry-run",
// "submitting", "submitted", "rolled-back" (an sbatch failed, or Ctrl-C), "cancelled".
enum class ManifestState { dry_run, submitting, submitted, rolled_back, cancelled };
std::string_view to_string(ManifestState state);
std::optional<ManifestState> parse_manifest_state(std::string_view text);

struct Manifest {
  std::string chain_id;
  std::string created;  // UTC, ISO 8601
  ManifestState state = ManifestState::submitting;
  std::filesystem::path run_dir;
  std::vector<StageRecord> stages;
};

std::string manifest_to_json(const Manifest& m);
// `where` names the file in errors.
Result<Manifest> manifest_from_json(std::string_view text, const std::string& where);

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

// The run directories under `runs_dir` holding a manifest, oldest first (chain ids sort by time).
std::vector<std::filesystem::path> list_run_dirs(const std::filesystem::path& runs_dir);

// `chain` ("" = the newest) under `runs_dir`.
Result<std::filesystem::path> find_run_dir(const std::filesystem::path& runs_dir, std::string_view chain);

}  // namespace trnslurm
