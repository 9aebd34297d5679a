#include "trnslurm/chain/chain_dirs.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/chain_jobs.hpp"
#include "trnslurm/chain/chain_progress.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace fs = std::filesystem;

namespace {

std::string per_chain(const std::string& dir, std::string_view chain_id) {
  if (dir.empty()) return dir;
  if (!is_local_dir(dir)) return fmt::format("{}{}{}", dir, dir.ends_with('/') ? "" : "/", chain_id);
  return (fs::path(dir) / chain_id).lexically_normal().string();
}

}  // namespace

ChainDirs chain_dirs(const CheckpointRecipe& c, std::string_view chain_id) {
  if (!c.per_chain) return ChainDirs{c.dir, c.converted_dir, c.export_dir};
  return ChainDirs{per_chain(c.dir, chain_id), per_chain(c.converted_dir, chain_id),
                   per_chain(c.export_dir, chain_id)};
}

nlohmann::json with_chain_dirs(nlohmann::json plan, const ChainDirs& dirs) {
  plan["checkpoint_dir"] = dirs.checkpoint;
  plan["converted_dir"] = dirs.converted;
  plan["export_dir"] = dirs.exported;
  return plan;
}

bool is_local_dir(std::string_view dir) {
  return !dir.empty() && dir.find("://") == std::string_view::npos;
}

std::optional<DirOwner> read_dir_owner(const fs::path& dir) {
  const auto text = read_file(dir / owner_file_name, std::size_t{64} * 1024);
  if (!text) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(*text);
    DirOwner o{j.at("chain_id").get<std::string>(), j.at("run_dir").get<std::string>()};
    if (!is_chain_id(o.chain_id)) return std::nullopt;
    return o;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Result<void> mark_dir_owner(const fs::path& dir, const DirOwner& owner) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(fmt::format("cannot create the directory: {}", ec.message()), dir.string(),
                "check the path in the recipe ([checkpoint]) and that this host can write there");
  const nlohmann::json j{{"chain_id", owner.chain_id}, {"run_dir", owner.run_dir.string()}};
  return write_file_atomic(dir / owner_file_name, j.dump() + "\n");
}

Result<bool> chain_is_live(const DirOwner& owner, SlurmClient& slurm) {
  std::vector<StageRef> stages;
  if (auto m = read_manifest(owner.run_dir)) {
    if (m->state == ManifestState::dry_run) return false;
    if (m->state == ManifestState::submitting && submission_in_progress(owner.run_dir)) return true;
    stages = stage_refs(*m);
  } else {
    auto found = find_chain_in_slurm(owner.chain_id, slurm);
    if (!found) return std::unexpected(found.error());
    stages = std::move(*found);
  }
  auto status = query_chain(stages, slurm);
  if (!status) return std::unexpected(status.error());
  return std::ranges::any_of(status->stages, [](const StageStatus& s) { return is_active(s.phase); });
}

Result<void> check_owner_not_live(const DirOwner& owner, const fs::path& dir, std::string_view what,
                                  SlurmClient& slurm) {
  auto live = chain_is_live(owner, slurm);
  if (!live) return std::unexpected(live.error());
  if (!*live) return {};
  return fail(fmt::format("{} {} is in use by chain {}, which is still queued or running", what, dir.string(),
                          owner.chain_id),
              (owner.run_dir / "manifest.json").string(),
              fmt::format("wait for it to end ('trnslurm watch {0}') or cancel it ('trnslurm cancel {0}')",
                          owner.chain_id));
}

Result<void> check_dir_not_in_use(const fs::path& dir, std::string_view chain_id, std::string_view what,
                                  SlurmClient& slurm) {
  const auto owner = read_dir_owner(dir);
  if (!owner || owner->chain_id == chain_id) return {};
  return check_owner_not_live(*owner, dir, what, slurm);
}

Result<ResumeSource> find_resume_source(const fs::path& runs_dir, std::string_view given,
                                        SlurmClient& slurm) {
  ResumeSource out;
  std::error_code ec;
  const fs::path path(given);
  fs::path run_dir;
  if (is_chain_id(given) && fs::is_regular_file(runs_dir / path / "manifest.json", ec))
    run_dir = fs::absolute(runs_dir / path, ec);
  else if (!given.empty() && fs::is_regular_file(path / "manifest.json", ec))
    run_dir = fs::absolute(path, ec);
  if (!run_dir.empty()) {
    auto m = read_manifest(run_dir);
    if (!m) return std::unexpected(m.error());
    auto figures = read_run_figures(run_dir);
    if (!figures) return std::unexpected(figures.error());
    out.chain = DirOwner{m->chain_id, run_dir};
    out.checkpoint_dir = figures->checkpoint_dir;
  } else if (!given.empty() && fs::is_directory(path, ec)) {
    out.checkpoint_dir = fs::absolute(path, ec).lexically_normal();
    out.chain = read_dir_owner(out.checkpoint_dir);
  } else {
    return fail(fmt::format("'{}' is neither a chain under {} nor a directory", given, runs_dir.string()),
                "--resume-from",
                "give a chain id ('trnslurm list'), its run directory, or a checkpoint directory");
  }
  if (out.chain)
    if (auto free = check_owner_not_live(*out.chain, out.checkpoint_dir,
                                         "--resume-from: the checkpoint directory", slurm);
        !free)
      return std::unexpected(free.error());
  if (!is_local_dir(out.checkpoint_dir.string()))
    return fail(fmt::format("the checkpoints of {} are at {}, not on a file system", given,
                            out.checkpoint_dir.string()),
                "--resume-from", "copy the checkpoint to a directory and give that directory");
  const auto newest = newest_completed_checkpoint(out.checkpoint_dir);
  if (!newest)
    return fail(fmt::format("no completed checkpoint (step_<n>/done or step-<n>/.metadata) in {}",
                            out.checkpoint_dir.string()),
                "--resume-from",
                "resume from a chain whose train stage wrote a checkpoint (trnslurm status shows its step)");
  out.step = newest->step;
  return out;
}

std::string newest_step_pipeline(std::string_view dir_placeholder) {
  // Both layouts of chain/chain_progress.hpp (checkpoint_layouts): step_<n>/done, step-<n>/.metadata.
  return fmt::format(
      "find {} -mindepth 2 -maxdepth 2 \\( -path '*/step_*/done' -o -path '*/step-*/.metadata' \\) "
      "-printf '%h\\n' 2>/dev/null |\n"
      "  sed -n 's|.*/\\(step[-_]\\)\\([0-9][0-9]*\\)$|\\2 \\1\\2|p' | sort -n | tail -n 1 | cut -d' ' -f2",
      dir_placeholder);
}

std::string resume_prologue() {
  return fmt::format(
      "# Submitted with --resume-from: until this chain has a checkpoint of its own, the source's newest\n"
      "# completed one is linked into its checkpoint directory (hard links, or a copy across file\n"
      "# systems), where the trainer resumes from it.\n"
      "trn_own=$({}) || true\n"
      "if [ -z \"$trn_own\" ]; then\n"
      "  trn_from=$({}) || true\n"
      "  if [ -z \"$trn_from\" ]; then\n"
      "    echo \"trnslurm: --resume-from: no completed checkpoint (step_<n>/done or step-<n>/.metadata) in "
      "\"{{{{resume_from}}}} "
      ">&2\n"
      "    exit 1\n"
      "  fi\n"
      "  mkdir -p {{{{checkpoint_dir}}}}\n"
      "  rm -rf {{{{checkpoint_dir}}}}/.trnslurm-resume\n"
      "  if ! cp -al {{{{resume_from}}}}/\"$trn_from\" {{{{checkpoint_dir}}}}/.trnslurm-resume "
      "2>/dev/null; "
      "then\n"
      "    rm -rf {{{{checkpoint_dir}}}}/.trnslurm-resume\n"
      "    cp -a {{{{resume_from}}}}/\"$trn_from\" {{{{checkpoint_dir}}}}/.trnslurm-resume\n"
      "  fi\n"
      "  mv {{{{checkpoint_dir}}}}/.trnslurm-resume {{{{checkpoint_dir}}}}/\"$trn_from\"\n"
      "  echo \"trnslurm: resuming from \"{{{{resume_from}}}}/\"$trn_from\" >&2\n"
      "fi\n",
      newest_step_pipeline("{{checkpoint_dir}}"), newest_step_pipeline("{{resume_from}}"));
}

}  // namespace trnslurm
