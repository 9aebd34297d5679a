#include "trnslurm/chain/chain_status.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ranges>

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
    LoadedChain c{m->chain_id, std::move(*m), {}};
    c.stages = stage_refs(*c.manifest);
    return c;
  }
  if (chain.empty() || !is_chain_id(chain)) return std::unexpected(dir.error());
  // The local state is gone: every job carries its chain and stage in its name and comment.
  auto found = find_chain_in_slurm(chain, slurm);
  if (!found) return std::unexpected(found.error());
  return LoadedChain{std::string(chain), std::nullopt, std::move(*found)};
}

Result<ChainStatus> refresh_status(LoadedChain& chain, SlurmClient& slurm) {
  auto status = query_chain(chain.stages, slurm);
  if (!status) return std::unexpected(status.error());
  if (!status->to_cancel.empty()) {
    auto cancelled = cancel_jobs(
        status->to_cancel, slurm, [](auto) {}, std::chrono::milliseconds(0));
    if (!cancelled) return std::unexpected(cancelled.error());
  }
  if (chain.manifest) {
    bool changed = false;
    for (std::size_t i = 0; i < chain.manifest->stages.size() && i < status->stages.size(); ++i) {
      auto& rec = chain.manifest->stages[i];
      const auto& st = status->stages[i];
      if (st.source == "squeue" || st.source == "sacct") {
        // A blocked stage has just been cancelled: that is what Slurm will say of it from now on.
        const auto state = st.state == "BLOCKED" ? std::string("CANCELLED") : st.state;
        if (rec.last_state != state || rec.last_exit_code != st.exit_code) {
          rec.last_state = state;
          rec.last_exit_code = st.exit_code;
          changed = true;
        }
      }
    }
    if (changed) (void)write_manifest(*chain.manifest);
    chain.stages = stage_refs(*chain.manifest);
  }
  return status;
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
    if (stages[i - 1].job_id && stages[i - 1].phase != JobPhase::pending) return i - 1;
  return 0;
}

}  // namespace trnslurm
