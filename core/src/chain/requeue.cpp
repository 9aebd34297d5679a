#include "trnslurm/chain/requeue.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/chain/preflight.hpp"
#include "trnslurm/health/drain.hpp"
#include "trnslurm/util/scontrol_record.hpp"

namespace trnslurm {
namespace {

void add_once(std::vector<std::string>& list, const std::string& node) {
  if (!node.empty() && std::ranges::find(list, node) == list.end()) list.push_back(node);
}

}  // namespace

std::vector<std::string> drained_nodes(const std::vector<std::string>& failed, SlurmClient& slurm) {
  std::vector<std::string> drained;
  for (const auto& node : failed) {
    const auto shown = slurm.show_node(node);
    if (shown && health::drained_by_trnslurm(*shown)) drained.push_back(node);
  }
  return drained;
}

Result<PreflightOutcome> settle_preflight(const std::vector<health::NodeRow>& rows, const PreflightJob& job,
                                          SlurmClient& slurm) {
  PreflightOutcome out;
  out.nodes_checked = rows.size();
  const auto log = read_restarts(job.run_dir);
  auto event = preflight_event(rows, log, job.max_exclusions);
  if (!event) return out;
  event->restart = job.restart;
  event->job = job.job;
  event->time = job.time;

  // The ExcNodeList to ask for: the job's own (a user's --exclude, earlier requeues), the nodes
  // this job excluded before by the log (in case scontrol cannot show the job), the failed ones.
  // ExcNodeList is replaced, not added to, so anything missing here would be run on again.
  std::vector<std::string> excluded;
  if (event->event == "exclude") {
    const auto shown = slurm.show_job(job.job);
    if (shown && !*shown)
      return fail(ErrorKind::slurm, fmt::format("job {} is gone: Slurm no longer knows it", job.job),
                  "pre-flight", "it was cancelled or ended while the pre-flight ran; nothing was requeued");
    if (shown) {
      if (const auto own = scontrol_field(**shown, "ExcNodeList"); own != "(null)")
        add_once(excluded, std::string(own));
    } else {
      out.own_exclusions_unknown = to_string(shown.error());
    }
    for (const auto& e : log)
      if (e.event == "exclude" && e.job == job.job)
        for (const auto& n : e.nodes) add_once(excluded, n);
    for (const auto& n : event->nodes) add_once(excluded, n);
  }

  // What the job can tell of the failing nodes' draining once the pre-flight step has ended (the
  // plugin drains before the step's tasks are reported ended).
  event->drain =
      health::drain_note(job.recipe_drain, job.site_drain, event->nodes, drained_nodes(event->nodes, slurm));
  if (auto w = append_restart(job.run_dir, *event); !w)
    return std::unexpected(classified(w.error(), ErrorKind::local));
  out.event = *event;
  if (event->event != "exclude") {
    out.kind = PreflightOutcome::Kind::gave_up;
    return out;
  }

  out.kind = PreflightOutcome::Kind::requeued;
  out.excluded = fmt::format("{}", fmt::join(excluded, ","));
  if (job.before_requeue) job.before_requeue(out);
  if (auto r = slurm.requeue(job.job); !r)
    return fail(ErrorKind::slurm, fmt::format("scontrol requeue of job {} failed", job.job), "pre-flight",
                r.error().what);
  for (int attempt = 0; attempt < job.exclude_attempts; ++attempt) {
    if (slurm.exclude_nodes(job.job, out.excluded)) {
      out.excluded_set = true;
      break;
    }
    if (job.pause) job.pause(std::chrono::milliseconds(100));
  }
  return out;
}

}  // namespace trnslurm
