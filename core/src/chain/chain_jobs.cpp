#include "trnslurm/chain/chain_jobs.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
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
  s.phase = phase_of(row);
  s.reason = row.reason;
  s.elapsed = row.elapsed;
  s.nodes = row.nodes;
  s.exit_code = row.exit_code;
  s.source = source;
}

}  // namespace

JobPhase phase_of(std::string_view st) {
  if (st == "COMPLETED") return JobPhase::succeeded;
  // REQUEUE_HOLD, SPECIAL_EXIT: requeued and held until someone releases the job.
  if (st == "REQUEUE_HOLD" || st == "SPECIAL_EXIT" || st == "RESV_DEL_HOLD") return JobPhase::held;
  if (st == "PENDING" || st == "REQUEUED" || st == "REQUEUE_FED" || st == "SUSPENDED" || st == "RESIZING")
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

bool is_held_reason(std::string_view reason) {
  // Reason names from Slurm's job_reason_string (JobHeldUser, JobHeldAdmin, JobHoldMaxRequeue);
  // a requeue-hold replaces the reason with its description ("launch failed requeued held",
  // "job requeued in held state").
  return reason.starts_with("JobHeld") || reason == "JobHoldMaxRequeue" ||
         reason.find("requeued held") != std::string_view::npos ||
         reason.find("held state") != std::string_view::npos;
}

JobPhase phase_of(const JobRow& row) {
  const auto p = phase_of(row.state);
  return p == JobPhase::pending && is_held_reason(row.reason) ? JobPhase::held : p;
}

bool is_active(JobPhase p) {
  return p == JobPhase::pending || p == JobPhase::running || p == JobPhase::held;
}

bool is_terminal(JobPhase p) {
  return p == JobPhase::succeeded || p == JobPhase::failed || p == JobPhase::cancelled;
}

std::string_view to_string(ChainVerdict v) {
  switch (v) {
    case ChainVerdict::succeeded:
      return "succeeded";
    case ChainVerdict::running:
      return "running";
    case ChainVerdict::failed:
      return "failed";
    case ChainVerdict::held:
      return "held";
    case ChainVerdict::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(JobPhase p) {
  switch (p) {
    case JobPhase::pending:
      return "pending";
    case JobPhase::running:
      return "running";
    case JobPhase::held:
      return "held";
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
      if (is_active(phase_of(r))) out.remaining.push_back(r.id);
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

Rollback roll_back_jobs(const std::vector<JobId>& ids, SlurmClient& slurm,
                        const std::function<void(std::chrono::milliseconds)>& pause, Error& why) {
  auto rb = cancel_jobs(ids, slurm, pause);
  for (int attempt = 1; !rb && attempt < 3; ++attempt) {
    pause(std::chrono::seconds(1));
    rb = cancel_jobs(ids, slurm, pause);
  }
  if (rb) return std::move(*rb);
  // Could not even cancel: say so, and list every id so the user can.
  why.hint = fmt::format("cancelling the jobs already submitted failed too: {}", to_string(rb.error()));
  return Rollback{{}, ids};
}

std::expected<std::vector<JobId>, SubmitFailure> submit_chain(const ChainSpec& chain, SlurmClient& slurm,
                                                              const SubmitHooks& hooks) {
  std::vector<JobId> ids;
  const auto roll_back = [&](Error error, std::size_t stage) {
    SubmitFailure f{std::move(error), stage, {}};
    f.rollback = roll_back_jobs(ids, slurm, hooks.pause, f.error);
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

// A job Slurm has forgotten, as its last attempt recorded its end (stage_outcome.hpp).
void fill_from_record(StageStatus& s, const OutcomeRecord& r, const StageRef& ref) {
  s.source = "record";
  s.host = r.host;
  s.nodes = ref.last_nodes;
  if (r.end) s.elapsed = slurm_elapsed(*r.end - r.start);
  if (r.exit) s.exit_code = std::to_string(*r.exit);
  const auto attempt = r.attempt > 0 ? fmt::format("restart {}", r.attempt) : std::string("the job");
  const auto on = r.host.empty() ? std::string() : fmt::format(" on {}", r.host);
  const auto cause = r.cause.empty() ? std::string() : fmt::format(" ({})", r.cause);
  if (r.state == "completed") {
    s.state = "COMPLETED";
    s.phase = JobPhase::succeeded;
    s.note = fmt::format("forgotten by Slurm; {} recorded exit 0{}", attempt, on);
  } else if (r.state == "failed" || r.state == "signalled") {
    s.state = "FAILED";
    s.phase = JobPhase::failed;
    s.note =
        r.state == "signalled"
            ? fmt::format(
                  "forgotten by Slurm; {} recorded SIG{}{} (scancel, the time limit or a preemption){}",
                  attempt, r.signal, on, cause)
            : fmt::format("forgotten by Slurm; {} recorded exit {}{}{}", attempt, s.exit_code, on, cause);
  } else {
    s.state = "UNKNOWN";
    s.phase = JobPhase::unknown;
    s.exit_code.clear();
    s.note =
        r.state == "requeued"
            ? fmt::format("forgotten by Slurm; {} requeued itself{}, and no later attempt recorded anything",
                          attempt, cause)
            : fmt::format(
                  "forgotten by Slurm; {} started{} at {:%Y-%m-%d %H:%M:%S} UTC and never recorded "
                  "its end (killed: a node lost, SIGKILL)",
                  attempt, on, fmt::gmtime(static_cast<std::time_t>(r.start)));
  }
}

// What squeue, else sacct, else an earlier status says of one stage's job.
StageStatus observe_stage(const StageRef& ref, const RowsById& live, const RowsById& accounted) {
  StageStatus s;
  s.name = ref.name;
  s.job_id = ref.job_id;
  const auto recorded = phase_of(ref.last_state);
  if (!ref.job_id) {
    // Never submitted: it will never run, which is as certain as a failure.
    s.state = "NOT_SUBMITTED";
    s.phase = JobPhase::cancelled;
    s.note = "not submitted";
  } else if (auto it = live.find(*ref.job_id); it != live.end()) {
    fill_from_row(s, *it->second, "squeue");
  } else if (auto at = accounted.find(*ref.job_id); at != accounted.end()) {
    fill_from_row(s, *at->second, "sacct");
  } else if (is_terminal(recorded)) {
    // Recorded by an earlier status (or not asked again): an ended job does not change.
    s.state = ref.last_state;
    s.phase = recorded;
    s.exit_code = ref.last_exit_code;
    s.reason = ref.last_reason;
    s.elapsed = ref.last_elapsed;
    s.nodes = ref.last_nodes;
    s.source = "manifest";
  } else if (const auto* rec = deciding_record(ref.outcomes, ref.name, *ref.job_id)) {
    fill_from_record(s, *rec, ref);
  } else {
    // Slurm forgot the job (MinJobAge) and there is no accounting: it ended, but how is not
    // known. Never a failure by itself: evaluate_chain looks at the stages after it.
    s.state = "UNKNOWN";
    s.phase = JobPhase::unknown;
    s.note = ref.last_state.empty()
                 ? "forgotten by Slurm, no accounting, never seen ended"
                 : fmt::format("forgotten by Slurm, no accounting; last seen {}", ref.last_state);
  }
  if (s.phase == JobPhase::held) {
    s.note = fmt::format("held ({}): 'scontrol release {}' once the cause is fixed, or 'trnslurm cancel'",
                         s.reason.empty() ? s.state : s.reason, *s.job_id);
  }
  return s;
}

bool pends_on_dependency(const StageStatus& s) {
  return s.reason == "Dependency" || s.reason == "DependencyNeverSatisfied";
}

// Whether stage `s` shows that the stage before it (its afterok parent) COMPLETED: it started,
// or it pends for a reason Slurm only gives once the dependency is satisfied. slurmctld's
// job_independent() tests dependencies before the begin time, reservations and resources;
// held jobs, bad accounts/QOS and "None" (not yet evaluated) say nothing either way.
bool shows_parent_completed(const StageStatus& s) {
  if (!s.job_id || s.source.empty()) return false;
  // The job wrote a record when it started, whatever came after.
  if (s.source == "record") return true;
  if (s.phase == JobPhase::pending) {
    return !pends_on_dependency(s) && s.reason != "None" && !s.reason.empty() &&
           s.reason != "InvalidAccount" && s.reason != "InvalidQOS" && s.reason != "BurstBufferOperation" &&
           s.reason != "ReservationDeleted";
  }
  // A job cancelled (or past its deadline) while pending never started; every other end did.
  return s.phase == JobPhase::running || s.phase == JobPhase::succeeded ||
         (s.phase == JobPhase::failed && s.state != "DEADLINE" && s.state != "REVOKED");
}

// Forgotten stages, from the stages after them (walked backwards: an inferred COMPLETED shows
// its own parent completed too).
void infer_forgotten(std::vector<StageStatus>& stages) {
  const StageStatus* witness = nullptr;  // the nearest later stage showing its parent completed
  for (std::size_t k = stages.size(); k-- > 0;) {
    auto& s = stages[k];
    if (s.phase == JobPhase::unknown && s.job_id && s.state == "UNKNOWN") {
      const auto* next = k + 1 < stages.size() ? &stages[k + 1] : nullptr;
      if (witness != nullptr) {
        s.state = "COMPLETED";
        s.phase = JobPhase::succeeded;
        s.source = "inferred";
        s.note = fmt::format("forgotten by Slurm; completed: {} {} after it", witness->name,
                             witness->phase == JobPhase::pending ? "became eligible" : "started");
      } else if (next != nullptr && next->reason == "DependencyNeverSatisfied") {
        s.state = "FAILED";
        s.phase = JobPhase::failed;
        s.source = "inferred";
        s.note =
            fmt::format("forgotten by Slurm; did not complete: {} says DependencyNeverSatisfied", next->name);
      }
    }
    if (shows_parent_completed(s) || (s.source == "inferred" && s.phase == JobPhase::succeeded)) witness = &s;
  }
}

// A pending stage behind a failed one can never start: it is shown blocked and, when it has a
// job, queued for cancelling. `failed` names the earlier failed stage, if any.
void mark_blocked(StageStatus& s, const std::string* failed, std::vector<JobId>& to_cancel) {
  const bool waiting = s.phase == JobPhase::pending || s.phase == JobPhase::held;
  if (waiting && (failed != nullptr || s.reason == "DependencyNeverSatisfied")) {
    s.note = failed != nullptr ? fmt::format("blocked: {} failed", *failed) : "blocked: a dependency failed";
    s.state = "BLOCKED";
    s.phase = JobPhase::cancelled;
    if (s.job_id) to_cancel.push_back(*s.job_id);
  } else if (s.phase == JobPhase::cancelled && failed != nullptr && s.job_id) {
    s.note = fmt::format("blocked: {} failed (cancelled)", *failed);
  } else if (s.phase == JobPhase::unknown && failed != nullptr && s.job_id && s.source.empty()) {
    // Forgotten, never recorded a start, behind a failure: afterok never let it start, and
    // Slurm (kill_invalid_depend) or an earlier status cancelled it. Nothing left to cancel.
    s.note = fmt::format("blocked: {} failed (never started)", *failed);
    s.state = "CANCELLED";
    s.phase = JobPhase::cancelled;
    s.source = "inferred";
  }
}

}  // namespace

bool may_change(const ChainStatus& status) {
  if (status.verdict == ChainVerdict::running) return true;
  return status.verdict == ChainVerdict::unknown &&
         std::any_of(status.stages.begin(), status.stages.end(),
                     [](const StageStatus& s) { return is_active(s.phase); });
}

ChainVerdict worst_verdict(const std::vector<ChainStatus>& statuses) {
  const auto rank = [](ChainVerdict v) {
    switch (v) {
      case ChainVerdict::succeeded:
        return 0;
      case ChainVerdict::running:
        return 1;
      case ChainVerdict::unknown:
        return 2;
      case ChainVerdict::held:
        return 3;
      case ChainVerdict::failed:
        return 4;
    }
    return 4;
  };
  ChainVerdict worst = ChainVerdict::succeeded;
  for (const auto& s : statuses) {
    if (rank(s.verdict) > rank(worst)) worst = s.verdict;
  }
  return worst;
}

ChainStatus evaluate_chain(const std::vector<StageRef>& stages, const std::vector<JobRow>& squeue_rows,
                           const std::optional<std::vector<JobRow>>& sacct_rows) {
  ChainStatus out;
  const auto live = by_id(squeue_rows);
  const auto accounted = sacct_rows ? by_id(*sacct_rows) : RowsById{};
  for (const auto& ref : stages) out.stages.push_back(observe_stage(ref, live, accounted));
  infer_forgotten(out.stages);
  bool any_active = false;
  bool all_done = !stages.empty();
  for (std::size_t k = 0; k < out.stages.size(); ++k) {
    auto& s = out.stages[k];
    mark_blocked(s, out.failed_stage ? &out.stages[*out.failed_stage].name : nullptr, out.to_cancel);
    if ((s.phase == JobPhase::failed || s.phase == JobPhase::cancelled) && !out.failed_stage)
      out.failed_stage = k;
    if (s.phase == JobPhase::held && !out.held_stage) out.held_stage = k;
    if (s.phase == JobPhase::unknown && !out.unknown_stage) out.unknown_stage = k;
    // squeue says 0 for jobs that have not ended: no exit code yet.
    if (is_active(s.phase)) {
      any_active = true;
      s.exit_code.clear();
    }
    if (s.phase != JobPhase::succeeded) all_done = false;
  }
  if (all_done) {
    out.verdict = ChainVerdict::succeeded;
  } else if (out.failed_stage) {
    // Stages still running after a failure are not ours to wait for: the chain has failed.
    out.verdict = ChainVerdict::failed;
  } else if (out.held_stage) {
    out.verdict = ChainVerdict::held;
  } else if (out.unknown_stage || !any_active) {
    out.verdict = ChainVerdict::unknown;
  } else {
    out.verdict = ChainVerdict::running;
  }
  return out;
}

std::vector<JobId> ids_to_ask(const std::vector<StageRef>& stages) {
  std::vector<JobId> ids;
  for (const auto& s : stages) {
    if (s.job_id && !is_terminal(phase_of(s.last_state))) ids.push_back(*s.job_id);
  }
  return ids;
}

Result<std::vector<ChainStatus>> query_chains(const std::vector<std::vector<StageRef>>& chains,
                                              SlurmClient& slurm) {
  std::vector<JobId> ids;
  for (const auto& c : chains) {
    const auto mine = ids_to_ask(c);
    ids.insert(ids.end(), mine.begin(), mine.end());
  }
  auto rows = ids.empty() ? Result<std::vector<JobRow>>{} : slurm.squeue(ids);
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
  std::vector<ChainStatus> out;
  out.reserve(chains.size());
  for (const auto& c : chains) out.push_back(evaluate_chain(c, *rows, accounted));
  return out;
}

Result<ChainStatus> query_chain(const std::vector<StageRef>& stages, SlurmClient& slurm) {
  auto all = query_chains({stages}, slurm);
  if (!all) return std::unexpected(all.error());
  return std::move(all->front());
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
    if (!newest) continue;
    StageRef ref;
    ref.name = stage;
    ref.job_id = newest;
    out.push_back(std::move(ref));
  }
  if (out.empty()) {
    return fail(
        fmt::format("no job of chain '{}' is known to Slurm, and there is no run directory for it", chain_id),
        "squeue", "Slurm forgets finished jobs after MinJobAge (300 s by default)");
  }
  return out;
}

}  // namespace trnslurm
