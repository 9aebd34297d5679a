#include "trnslurm/chain/chain_jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace trnslurm {
namespace {

std::map<JobId, const JobRow*> by_id(const std::vector<JobRow>& rows) {
  std::map<JobId, const JobRow*> out;
  for (const auto& r : rows) out[r.id] = &r;
  return out;
}

void fill_from_row(StageStatus& s, const JobRow& row, const char* source) {
  s.state = row.state;
  s.phase = phase_of(row.state);
  s.reason = row.reason;
  s.elapsed = row.elapsed;
  s.nodes = row.nodes;
  s.exit_code = row.exit_code;
  s.source = source;
}

}  // namespace

JobPhase phase_of(std::string_view st) {
  if (st == "COMPLETED") return JobPhase::succeeded;
  if (st == "PENDING" || st == "REQUEUED" || st == "REQUEUE_HOLD" || st == "REQUEUE_FED" ||
      st == "RESV_DEL_HOLD" || st == "SUSPENDED" || st == "SPECIAL_EXIT" || st == "RESIZING")
    return JobPhase::pending;
  if (st == "RUNNING" || st == "CONFIGURING" || st == "COMPLETING" || st == "STAGE_OUT" ||
      st == "SIGNALING" || st == "STOPPED")
    return JobPhase::running;
  if (st == "CANCELLED") return JobPhase::cancelled;
  if (st == "FAILED" || st == "TIMEOUT" || st == "NODE_FAIL" || st == "OUT_OF_MEMORY" || st == "BOOT_FAIL" ||
      st == "DEADLINE" || st == "PREEMPTED" || st == "REVOKED")
    return JobPhase::failed;
  return JobPhase::unknown;
}

bool is_active(JobPhase p) {
  return p == JobPhase::pending || p == JobPhase::running;
}

std::string_view to_string(ChainVerdict v) {
  switch (v) {
    case ChainVerdict::succeeded:
      return "succeeded";
    case ChainVerdict::running:
      return "running";
    case ChainVerdict::failed:
      return "failed";
  }
  return "unknown";
}

std::string_view to_string(JobPhase p) {
  switch (p) {
    case JobPhase::pending:
      return "pending";
    case JobPhase::running:
      return "running";
    case JobPhase::succeeded:
      return "succeeded";
    case JobPhase::failed:
      return "failed";
    case JobPhase::cancelled:
      return "cancelled";
    case JobPhase::unknown:
      return "unknown";
  }
  return "unknown";
}

Result<Rollback> cancel_jobs(const std::vector<JobId>& ids, SlurmClient& slurm,
                             const std::function<void(std::chrono::milliseconds)>& pause,
                             std::chrono::milliseconds timeout) {
  Rollback out;
  if (ids.empty()) return out;
  if (auto c = slurm.scancel(ids); !c) return std::unexpected(c.error());
  out.cancelled = ids;
  const auto step = std::chrono::milliseconds(200);
  for (std::chrono::milliseconds waited{0};; waited += step) {
    auto rows = slurm.squeue(ids);
    if (!rows) return std::unexpected(rows.error());
    out.remaining.clear();
    for (const auto& r : *rows) {
      if (is_active(phase_of(r.state))) out.remaining.push_back(r.id);
    }
    if (out.remaining.empty() || waited >= timeout) break;
    // A job can be submitted but not yet cancellable: ask again for what is left.
    if (waited.count() > 0 && waited % std::chrono::seconds(2) == std::chrono::milliseconds(0)) {
      (void)slurm.scancel(out.remaining);
    }
    pause(step);
  }
  return out;
}

std::expected<std::vector<JobId>, SubmitFailure> submit_chain(const ChainSpec& chain, SlurmClient& slurm,
                                                              const SubmitHooks& hooks) {
  std::vector<JobId> ids;
  const auto roll_back = [&](Error error, std::size_t stage) {
    SubmitFailure f{std::move(error), stage, {}};
    auto rb = cancel_jobs(ids, slurm, hooks.pause);
    if (rb) {
      f.rollback = std::move(*rb);
    } else {
      // Could not even cancel: say so, and list every id so the user can.
      f.rollback.remaining = ids;
      f.error.hint =
          fmt::format("cancelling the jobs already submitted failed too: {}", to_string(rb.error()));
    }
    return std::unexpected(std::move(f));
  };
  for (std::size_t k = 0; k < chain.stages.size(); ++k) {
    if (hooks.interrupted()) {
      return roll_back(
          Error{"interrupted: the chain was not submitted", fmt::format("stage {}", chain.stages[k].name),
                "every job already submitted for it was cancelled"},
          k);
    }
    auto id =
        slurm.sbatch(sbatch_argv(chain, k, ids.empty() ? std::nullopt : std::optional<JobId>(ids.back())));
    if (!id) {
      auto e = id.error();
      e.where =
          fmt::format("sbatch of stage {} ({} of {})", chain.stages[k].name, k + 1, chain.stages.size());
      return roll_back(std::move(e), k);
    }
    ids.push_back(*id);
    if (auto r = hooks.submitted(k, *id); !r) return roll_back(r.error(), k);
  }
  // Interrupted during the last sbatch: the whole chain is in, but the user asked to stop.
  if (hooks.interrupted()) {
    return roll_back(Error{"interrupted: the chain was not submitted", "after the last sbatch",
                           "every job already submitted for it was cancelled"},
                     chain.stages.size());
  }
  return ids;
}

namespace {

using RowsById = std::map<JobId, const JobRow*>;

// What squeue, else sacct, else the manifest says of one stage's job.
StageStatus observe_stage(const StageRef& ref, const RowsById& live, const RowsById& accounted) {
  StageStatus s;
  s.name = ref.name;
  s.job_id = ref.job_id;
  if (!ref.job_id) {
    s.state = "NOT_SUBMITTED";
    s.phase = JobPhase::unknown;
    s.note = "not submitted";
  } else if (auto it = live.find(*ref.job_id); it != live.end()) {
    fill_from_row(s, *it->second, "squeue");
  } else if (auto at = accounted.find(*ref.job_id); at != accounted.end()) {
    fill_from_row(s, *at->second, "sacct");
  } else if (!ref.last_state.empty()) {
    s.state = ref.last_state;
    s.phase = phase_of(ref.last_state);
    s.exit_code = ref.last_exit_code;
    s.source = "manifest";
    s.note = "forgotten by Slurm; last state seen by trnslurm";
    // A job Slurm forgot is no longer queued: what was last seen active has ended somehow.
    if (is_active(s.phase)) s.phase = JobPhase::unknown;
  } else {
    s.state = "UNKNOWN";
    s.phase = JobPhase::unknown;
    s.note = "forgotten by Slurm and no accounting";
  }
  return s;
}

// A pending stage behind a failed one can never start: it is shown blocked and, when it has a
// job, queued for cancelling. `failed` names the earlier failed stage, if any.
void mark_blocked(StageStatus& s, const std::string* failed, std::vector<JobId>& to_cancel) {
  if (s.phase == JobPhase::pending && (failed != nullptr || s.reason == "DependencyNeverSatisfied")) {
    s.note = failed != nullptr ? fmt::format("blocked: {} failed", *failed) : "blocked: a dependency failed";
    s.state = "BLOCKED";
    s.phase = JobPhase::cancelled;
    if (s.job_id) to_cancel.push_back(*s.job_id);
  } else if (s.phase == JobPhase::cancelled && failed != nullptr) {
    s.note = fmt::format("blocked: {} failed (cancelled)", *failed);
  }
}

}  // namespace

ChainStatus evaluate_chain(const std::vector<StageRef>& stages, const std::vector<JobRow>& squeue_rows,
                           const std::optional<std::vector<JobRow>>& sacct_rows) {
  ChainStatus out;
  const auto live = by_id(squeue_rows);
  const auto accounted = sacct_rows ? by_id(*sacct_rows) : RowsById{};
  bool any_active = false;
  bool all_done = true;
  for (const auto& ref : stages) {
    auto s = observe_stage(ref, live, accounted);
    mark_blocked(s, out.failed_stage ? &stages[*out.failed_stage].name : nullptr, out.to_cancel);
    if ((s.phase == JobPhase::failed || s.phase == JobPhase::cancelled || s.phase == JobPhase::unknown) &&
        !out.failed_stage) {
      out.failed_stage = out.stages.size();
    }
    // squeue says 0 for jobs that have not ended: no exit code yet.
    if (is_active(s.phase)) {
      any_active = true;
      s.exit_code.clear();
    }
    if (s.phase != JobPhase::succeeded) all_done = false;
    out.stages.push_back(std::move(s));
  }
  if (all_done && !stages.empty()) {
    out.verdict = ChainVerdict::succeeded;
  } else if (out.failed_stage) {
    // Stages still running after a failure are not ours to wait for: the chain has failed.
    out.verdict = ChainVerdict::failed;
  } else {
    out.verdict = any_active ? ChainVerdict::running : ChainVerdict::failed;
  }
  return out;
}

Result<ChainStatus> query_chain(const std::vector<StageRef>& stages, SlurmClient& slurm) {
  std::vector<JobId> ids;
  for (const auto& s : stages) {
    if (s.job_id) ids.push_back(*s.job_id);
  }
  auto rows = slurm.squeue(ids);
  if (!rows) return std::unexpected(rows.error());
  std::vector<JobId> forgotten;
  for (auto id : ids) {
    if (std::none_of(rows->begin(), rows->end(), [&](const JobRow& r) { return r.id == id; }))
      forgotten.push_back(id);
  }
  std::optional<std::vector<JobRow>> accounted;
  if (!forgotten.empty()) {
    auto acct = slurm.sacct(forgotten);
    if (!acct) return std::unexpected(acct.error());
    accounted = std::move(*acct);
  }
  return evaluate_chain(stages, *rows, accounted);
}

Result<std::vector<StageRef>> find_chain_in_slurm(std::string_view chain_id, SlurmClient& slurm) {
  std::vector<std::string> names;
  names.reserve(stage_names.size());
  for (auto stage : stage_names) names.push_back(job_name(chain_id, stage));
  auto rows = slurm.squeue_by_name(names);
  if (!rows) return std::unexpected(rows.error());
  std::vector<StageRef> out;
  for (auto stage : stage_names) {
    const auto comment = job_comment(chain_id, stage);
    std::optional<JobId> newest;
    for (const auto& r : *rows) {
      if (r.comment == comment && (!newest || r.id > *newest)) newest = r.id;
    }
    if (newest) out.push_back(StageRef{std::string(stage), newest, {}, {}});
  }
  if (out.empty()) {
    return fail(
        fmt::format("no job of chain '{}' is known to Slurm, and there is no run directory for it", chain_id),
        "squeue", "Slurm forgets finished jobs after MinJobAge (300 s by default)");
  }
  return out;
}

}  // namespace trnslurm
