#pragma once
// How each attempt of a stage's job ended, as the job itself recorded it (written by
// core/src/chain/scripts/stage_outcome.sh, which every job script runs first):
// <run dir>/outcomes/<stage>.<job id>.<attempt>.json. What status reads once Slurm has forgotten
// the job and there is no accounting (docs/chain.md, "How a stage ended").

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/chain/chain.hpp"

namespace trnslurm {

struct OutcomeRecord {
  std::string stage;
  JobId job = 0;
  std::uint32_t attempt = 0;  // SLURM_RESTART_COUNT: 0, then one more at each requeue
  // running (started, end not recorded yet), completed (exit 0), failed (exit non-zero),
  // signalled (SIGTERM, SIGINT or SIGHUP reached the batch shell: scancel, the time limit, a
  // preemption), requeued (the train wrapper requeued its own job).
  std::string state;
  std::optional<int> exit;
  std::string signal;      // "TERM", "INT", "HUP"; "" for none
  std::string cause;       // time-limit, preflight, max-restarts, preempted, node-failure; "" unknown
  std::int64_t start = 0;  // Unix seconds
  std::optional<std::int64_t> end;  // none while running
  std::string host;                 // SLURMD_NODENAME of the batch shell
};

std::filesystem::path outcomes_dir(const std::filesystem::path& run_dir);

// One record; nullopt for anything that is not one (a torn or foreign file).
std::optional<OutcomeRecord> parse_outcome(std::string_view json);
// Every record of the run directory, bad files skipped (status never fails over one).
std::vector<OutcomeRecord> read_outcomes(const std::filesystem::path& run_dir);

// The record that speaks for job `job` of `stage`: the one of its highest attempt. Never chosen by
// time (nodes' clocks differ, and an attempt killed by a requeue may write late); a record of
// another job (an earlier submit of the stage) says nothing of this one. nullptr when none.
const OutcomeRecord* deciding_record(std::span<const OutcomeRecord> records, std::string_view stage,
                                     JobId job);

// What is known of a stage that ended without recording how (its job killed: a node lost,
// SIGKILL), or whose record is not there: what status shows instead of a verdict, and what to run.
struct StageEvidence {
  std::string stage;
  std::optional<std::uint64_t> checkpoint_step;  // the newest completed checkpoint, if any
  std::int64_t checkpoint_time = 0;              // its done file's mtime, Unix seconds
  std::string checkpoint_dir;
  std::string export_dir;
  std::optional<std::size_t> export_entries;  // entries in the export directory; none = absent
  std::string log;                            // the stage's Slurm output
  std::string last_log_line;                  // its last non-empty line, log-safe (util/printable)
  std::vector<std::string> to_run;            // commands that tell more, most telling first
};

// Gathered from the run directory and the chain's own directories ("" = not recorded).
// `host` is where the last attempt ran, from its record ("" = not known).
StageEvidence gather_evidence(const std::filesystem::path& run_dir, std::string_view chain_id,
                              std::string_view stage, JobId job, const std::filesystem::path& checkpoint_dir,
                              const std::filesystem::path& export_dir, std::string_view host);

// Elapsed time as squeue prints it: M:SS, H:MM:SS, D-HH:MM:SS.
std::string slurm_elapsed(std::int64_t seconds);

}  // namespace trnslurm
