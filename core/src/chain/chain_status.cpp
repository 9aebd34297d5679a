#include "trnslurm/chain/chain_status.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ranges>
#include <span>
#include <tuple>

#include "trnslurm/chain/chain.hpp"

namespace trnslurm {

Result<LoadedChain> load_chain(const std::filesystem::path& runs_dir, std::string_view chain,
                               SlurmClient& slurm) {
  auto dir = find_run_dir(runs_dir, chain);
  if (dir) {
    auto m = read_manifest(*dir);
    if (!m) return std::unexpected(m.error());
    if (m->state == ManifestState::dry_run) {
      return fail(fmt::format("chain {} was a dry run: nothing was submitted", m->chain_id), dir->string(),
                  "give the id of a submitted chain ('trnslurm list')");
    }
    LoadedChain c{m->chain_id, std::move(*m), {}, std::nullopt};
    c.stages = stage_refs(*c.manifest);
    return c;
  }
  if (chain.empty() || !is_chain_id(chain)) return std::unexpected(dir.error());
  // The local state is gone: every job carries its chain and stage in its name and comment.
  auto found = find_chain_in_slurm(chain, slurm);
  if (!found) return std::unexpected(found.error());
  return LoadedChain{std::string(chain), std::nullopt, std::move(*found), std::nullopt};
}

Result<Rollback> cancel_chain(LoadedChain& chain, SlurmClient& slurm,
                              const std::function<void(std::chrono::milliseconds)>& pause,
                              std::chrono::milliseconds timeout) {
  std::vector<std::string> names;
  names.reserve(chain.stages.size());
  for (const auto& s : chain.stages) names.push_back(job_name(chain.chain_id, s.name));
  auto rows = names.empty() ? Result<std::vector<JobRow>>{} : slurm.squeue_by_name(names);
  if (!rows) return std::unexpected(rows.error());
  std::vector<JobId> ids;
  const auto add = [&](JobId id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (auto& s : chain.stages) {
    if (s.job_id) add(*s.job_id);
    for (const auto& r : *rows) {
      if (r.comment != job_comment(chain.chain_id, s.name) || !is_active(phase_of(r))) continue;
      add(r.id);
      if (s.job_id) continue;
      // Created by an sbatch whose answer never reached the journal: recorded now.
      s.job_id = r.id;
      if (chain.manifest) {
        for (auto& rec : chain.manifest->stages) {
          if (rec.name == s.name && !rec.job_id) rec.job_id = r.id;
        }
        (void)record_job(chain.manifest->run_dir, s.name, r.id);
      }
    }
  }
  return cancel_jobs(ids, slurm, pause, timeout);
}

namespace {
// A submit that died mid-way, or whose rollback could not cancel everything, left jobs behind.
bool may_have_leftovers(const Manifest& m) {
  return m.state == ManifestState::rollback_failed ||
         (m.state == ManifestState::submitting && !submission_in_progress(m.run_dir));
}
}  // namespace

namespace {

// What an earlier refresh may not know: records in the manifest what Slurm said of each stage.
void record_seen(LoadedChain& chain, const ChainStatus& status) {
  if (!chain.manifest) return;
  bool changed = false;
  for (std::size_t i = 0; i < chain.manifest->stages.size() && i < status.stages.size(); ++i) {
    auto& rec = chain.manifest->stages[i];
    const auto& st = status.stages[i];
    if (st.source != "squeue" && st.source != "sacct" && st.source != "inferred") continue;
    // A blocked stage has just been cancelled: that is what Slurm will say of it from now on.
    const auto state = st.state == "BLOCKED" ? std::string("CANCELLED") : st.state;
    // Elapsed time alone changing is no reason to rewrite the manifest at every refresh.
    if (std::tie(rec.last_state, rec.last_exit_code, rec.last_reason) !=
        std::tie(state, st.exit_code, st.reason)) {
      std::tie(rec.last_state, rec.last_exit_code, rec.last_reason, rec.last_elapsed, rec.last_nodes) =
          std::tie(state, st.exit_code, st.reason, st.elapsed, st.nodes);
      changed = true;
    }
  }
  if (changed) (void)write_manifest(*chain.manifest);
  chain.stages = stage_refs(*chain.manifest);
}

// A verdict nothing recorded: what the run directory and the chain's directories show instead.
void add_evidence(const LoadedChain& chain, ChainStatus& status) {
  if (!chain.manifest || status.verdict != ChainVerdict::unknown || !status.unknown_stage) return;
  const auto& s = status.stages[*status.unknown_stage];
  if (!s.job_id) return;
  const auto& m = *chain.manifest;
  status.evidence =
      gather_evidence(m.run_dir, chain.chain_id, s.name, *s.job_id, m.checkpoint_dir, m.export_dir, s.host);
}

}  // namespace

Result<std::vector<ChainStatus>> refresh_statuses(
    std::span<LoadedChain> chains, SlurmClient& slurm,
    const std::function<void(std::chrono::milliseconds)>& pause) {
  std::vector<std::vector<StageRef>> refs;
  refs.reserve(chains.size());
  for (auto& chain : chains) {
    if (chain.manifest && may_have_leftovers(*chain.manifest)) {
      auto swept = cancel_chain(chain, slurm, pause, std::chrono::seconds(5));
      if (!swept) return std::unexpected(swept.error());
      const auto state =
          swept->remaining.empty() ? ManifestState::rolled_back : ManifestState::rollback_failed;
      if (record_state(chain.manifest->run_dir, state)) chain.manifest->state = state;
      chain.leftovers = std::move(*swept);
    }
    // Read again at every refresh: a job may have recorded its end since the last one.
    if (chain.manifest) chain.stages = stage_refs(*chain.manifest);
    refs.push_back(chain.stages);
  }
  auto statuses = query_chains(refs, slurm);
  if (!statuses) return std::unexpected(statuses.error());
  std::vector<JobId> blocked;
  for (const auto& st : *statuses) blocked.insert(blocked.end(), st.to_cancel.begin(), st.to_cancel.end());
  if (!blocked.empty()) {
    auto cancelled = cancel_jobs(
        blocked, slurm, [](auto) {}, std::chrono::milliseconds(0));
    if (!cancelled) return std::unexpected(cancelled.error());
  }
  for (std::size_t i = 0; i < chains.size(); ++i) {
    record_seen(chains[i], (*statuses)[i]);
    add_evidence(chains[i], (*statuses)[i]);
  }
  return statuses;
}

Result<ChainStatus> refresh_status(LoadedChain& chain, SlurmClient& slurm,
                                   const std::function<void(std::chrono::milliseconds)>& pause) {
  auto all = refresh_statuses(std::span<LoadedChain>(&chain, 1), slurm, pause);
  if (!all) return std::unexpected(all.error());
  return std::move(all->front());
}

Result<std::size_t> stage_to_show(const ChainStatus& status, std::string_view requested) {
  const auto& stages = status.stages;
  if (!requested.empty()) {
    for (std::size_t i = 0; i < stages.size(); ++i)
      if (stages[i].name == requested) return i;
    return fail(
        fmt::format("no stage '{}' in this chain", requested), "--stage",
        fmt::format("its stages: {}", fmt::join(stages | std::views::transform(&StageStatus::name), ", ")));
  }
  if (status.failed_stage) return *status.failed_stage;
  for (std::size_t i = 0; i < stages.size(); ++i)
    if (stages[i].phase == JobPhase::running) return i;
  for (std::size_t i = stages.size(); i > 0; --i)
    if (stages[i - 1].job_id && stages[i - 1].phase != JobPhase::pending &&
        stages[i - 1].phase != JobPhase::held)
      return i - 1;
  return 0;
}

}  // namespace trnslurm
