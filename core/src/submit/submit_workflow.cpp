#include "trnslurm/submit/submit_workflow.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <future>
#include <system_error>

#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/chain/upstream_stage.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace {
namespace fs = std::filesystem;

std::unexpected<SubmitError> failed(ErrorKind kind, Error error) {
  return std::unexpected(SubmitError{kind, std::move(error), {}, false, {}, {}});
}

std::string iso_time(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(t)));
}

Result<void> apply_request(const SubmitRequest& request, ChainSpec& chain) {
  if (!request.partition.empty()) chain.slurm.partition = request.partition;
  if (!request.account.empty()) chain.slurm.account = request.account;
  if (!request.qos.empty()) chain.slurm.qos = request.qos;
  if (request.exclusive) chain.slurm.exclusive = *request.exclusive;
  chain.slurm.sbatch_args.insert(chain.slurm.sbatch_args.end(), request.sbatch_args.begin(),
                                 request.sbatch_args.end());
  for (const auto& sa : request.stage_args) {
    const auto eq = sa.find('=');
    const auto it = std::ranges::find(chain.stages, sa.substr(0, eq), &StageSpec::name);
    if (eq == std::string::npos || it == chain.stages.end()) {
      return fail(fmt::format("'{}' does not name a stage of this chain", sa), "--stage-arg",
                  "write STAGE=ARG, e.g. --stage-arg convert=--partition=cpu");
    }
    it->sbatch_args.push_back(sa.substr(eq + 1));
  }
  return {};
}

// The manifest before any job id is known.
Manifest new_manifest(const ChainSpec& chain, const ChainDirs& dirs, const std::string& resume_from,
                      ManifestState state, std::string created) {
  Manifest m;
  m.chain_id = chain.chain_id;
  m.created = std::move(created);
  m.run_dir = chain.run_dir;
  m.state = state;
  m.checkpoint_dir = dirs.checkpoint;
  m.converted_dir = dirs.converted;
  m.export_dir = dirs.exported;
  m.resume_from = resume_from;
  for (std::size_t k = 0; k < chain.stages.size(); ++k) {
    // Shown as the dependency in the manifest until the real id is known.
    StageRecord r;
    r.name = chain.stages[k].name;
    r.sbatch_argv = sbatch_argv(chain, k, k == 0 ? std::nullopt : std::optional<JobId>(0));
    m.stages.push_back(std::move(r));
  }
  return m;
}

// The scripts, recipe.toml and plan.json are created in place (one metadata operation each, not a
// temporary file, a rename and a chmod): the run directory is new, and no command reads it before
// the manifest, written atomically after them, exists (list_run_dirs, find_run_dir). A submit
// interrupted while writing them leaves a directory without a manifest, which nothing lists.
Result<void> write_script(const ChainSpec& chain, std::size_t k) {
  return write_new_file(script_path(chain, k), chain.stages[k].script, 0755);
}

// Everything in the run directory but the first stage's script and the job ids.
Result<void> write_records(const ChainSpec& chain, const Recipe& recipe, const nlohmann::json& plan,
                           const Manifest& manifest) {
  for (std::size_t k = 1; k < chain.stages.size(); ++k)
    if (auto w = write_script(chain, k); !w) return w;
  if (auto w = write_new_file(chain.run_dir / "recipe.toml", recipe.text, 0644); !w) return w;
  if (auto w = write_new_file(chain.run_dir / "plan.json", plan.dump(2) + "\n", 0644); !w) return w;
  if (auto w = write_manifest(manifest); !w) return w;
  // Creates the journal here, so that recording the first job id only appends to it.
  return record_state(chain.run_dir, manifest.state);
}

// The chain rendered and its run directory made (and, for a real submit, locked).
struct Placed {
  ChainSpec chain;
  ChainDirs dirs;
  std::optional<SubmitLock> lock;
};

// A fresh chain id, the chain rendered under it, and its run directory. The run directory is
// created with mkdir: a collision (same millisecond, same random draw) draws again. nullopt: the
// chain has no stage left once the compile cache has spoken (outcome nothing_to_submit).
std::expected<std::optional<Placed>, SubmitError> place_chain(
    const Recipe& recipe, const nlohmann::json& plan_doc, const SubmitRequest& request,
    const std::string& resume_from, std::optional<SubmitCache>& cache, SlurmClient& slurm,
    const SubmitContext& context) {
  for (int attempt = 0;; ++attempt) {
    const auto id = make_chain_id(context.now(), context.random());
    auto inputs = chain_inputs_from_recipe(recipe, plan_doc, id, request.runs_dir / id, request.site);
    if (!inputs) return failed(ErrorKind::input, inputs.error());
    inputs->selection = request.selection;
    if (cache) cache_inputs(*cache, *inputs);
    inputs->resume_from = resume_from;
    Placed placed;
    placed.dirs = chain_dirs(recipe.checkpoint, id);
    // Only with checkpoint.per_chain = false can another chain have marked it.
    if (is_local_dir(placed.dirs.checkpoint))
      if (auto free = check_dir_not_in_use(placed.dirs.checkpoint, id, "checkpoint.dir", slurm); !free)
        return failed(ErrorKind::input, free.error());
    // Before anything is submitted: a missing script would fail inside a job, hours later. A dry
    // run only warns, so that scripts can be rendered where the cluster's files are not.
    if (auto files = check_upstream_files(recipe, inputs->values); !files) {
      if (!request.dry_run) return failed(ErrorKind::input, files.error());
      context.warning(files.error());
    }
    auto chain = render_chain(*inputs);
    if (!chain) return failed(ErrorKind::input, chain.error());
    if (auto f = apply_request(request, *chain); !f) return failed(ErrorKind::input, f.error());
    if (cache) apply_cache(*cache, *chain);
    // Only the precompile was selected, and the cache is warm (or --precompile=never).
    if (chain->stages.empty()) return std::optional<Placed>{};
    placed.chain = std::move(*chain);
    auto dir = create_run_dir(request.runs_dir, id);
    if (!dir) {
      if (attempt < 4) continue;
      return failed(ErrorKind::local, dir.error());
    }
    if (!request.dry_run) {
      // Before anything says "submitting": a status that finds that state without this lock
      // cancels what the submit left behind.
      auto locked = lock_submission(*dir);
      if (!locked) {
        std::error_code ec;
        fs::remove_all(*dir, ec);
        return failed(ErrorKind::local, locked.error());
      }
      placed.lock.emplace(std::move(*locked));
    }
    return std::optional<Placed>{std::move(placed)};
  }
}

// Where a submission stands, so that it is undone whichever way it fails.
struct Progress {
  bool started = false;                       // an sbatch was run: the run directory is kept
  std::vector<JobId> ids;                     // every id sbatch returned, recorded first
  std::atomic<bool> records_written = false;  // write_records completed: manifest and journal exist
};

// The run directory says `state`: in the journal once the records exist, else in a manifest
// written now (with the ids known), so that `list` and `status` see the chain either way.
Result<void> record_final_state(const SubmitOutcome& out, const Progress& progress, ManifestState state) {
  try {
    if (progress.records_written) return record_state(out.chain.run_dir, state);
    auto m = out.manifest;
    m.state = state;
    for (std::size_t k = 0; k < progress.ids.size() && k < m.stages.size(); ++k)
      m.stages[k].job_id = progress.ids[k];
    return write_manifest(m);
  } catch (const std::exception& e) {
    return fail(fmt::format("cannot record the chain's state: {}", e.what()), out.chain.run_dir.string());
  }
}

// A failure after the run directory was made. Before any sbatch: the run directory goes. After:
// every job of the chain is cancelled and the chain recorded rolled back.
SubmitError undo(SubmitOutcome& out, Progress& progress, ErrorKind kind, Error error,
                 std::optional<Rollback> rolled, SlurmClient& slurm, const SubmitContext& context) {
  SubmitError e{kind, std::move(error), out.chain.chain_id, progress.started, {}, {}};
  if (!progress.started) {
    std::error_code ec;
    fs::remove_all(out.chain.run_dir, ec);
    if (ec)
      e.problems.push_back(Error{fmt::format("cannot remove the run directory: {}", ec.message()),
                                 out.chain.run_dir.string(), "remove it by hand"});
    return e;
  }
  if (rolled) {
    e.rollback = std::move(*rolled);
  } else {
    auto ids = progress.ids;
    // A job whose id never came back (an exception inside sbatch's call) is found by its name.
    if (auto found = find_chain_in_slurm(out.chain.chain_id, slurm))
      for (const auto& ref : *found)
        if (ref.job_id && std::ranges::find(ids, *ref.job_id) == ids.end()) ids.push_back(*ref.job_id);
    e.rollback = roll_back_jobs(ids, slurm, context.pause, e.error);
  }
  const auto state =
      e.rollback.remaining.empty() ? ManifestState::rolled_back : ManifestState::rollback_failed;
  if (auto w = record_final_state(out, progress, state); !w) e.problems.push_back(w.error());
  return e;
}

// The run directory of a dry run, and the compile cache's note of it.
Result<void> write_dry_run(SubmitOutcome& out, const Recipe& recipe, const nlohmann::json& chain_plan) {
  if (auto w = write_records(out.chain, recipe, chain_plan, out.manifest); !w) return w;
  if (!out.cache) return {};
  auto note = record_cache(*out.cache, out.chain, out.manifest.created, {}, true);
  if (!note) return std::unexpected(note.error());
  out.cache_note = std::move(*note);
  return {};
}

// Submits the chain and records each id as it comes. The rest of the run directory is written on
// a second thread while the first sbatch runs: each new file is a metadata round trip (~140 us on
// the development machine's ext4, more on a shared file system), and sbatch mostly waits for
// slurmctld. The first submitted hook waits for it, so every script exists before its sbatch and
// the manifest before any job id is recorded.
std::expected<void, SubmitError> submit_jobs(SubmitOutcome& out, Progress& progress, const Recipe& recipe,
                                             const nlohmann::json& chain_plan, SlurmClient& slurm,
                                             const SubmitContext& context) {
  auto records = std::async(std::launch::async, [&] {
    auto w = write_records(out.chain, recipe, chain_plan, out.manifest);
    if (w) progress.records_written = true;
    return w;
  });
  bool local_failure = false;
  bool was_interrupted = false;
  SubmitHooks hooks;
  hooks.submitted = [&](std::size_t k, JobId id) -> Result<void> {
    progress.ids.push_back(id);  // first: whatever fails next, this job is cancelled
    if (records.valid())
      if (auto w = records.get(); !w) {
        local_failure = true;
        return w;
      }
    out.manifest.stages[k].job_id = id;
    // On disk before the next sbatch: a crash now still leaves every id in the run directory.
    auto r = record_job(out.chain.run_dir, out.chain.stages[k].name, id);
    if (!r) local_failure = true;
    return r;
  };
  hooks.interrupted = [&] { return was_interrupted = context.interrupted(); };
  hooks.pause = context.pause;
  progress.started = true;
  auto ids = submit_chain(out.chain, slurm, hooks);
  if (records.valid()) (void)records.get();  // the first sbatch failed: the records only matter for the state
  if (!ids) {
    const auto kind = local_failure     ? ErrorKind::local
                      : was_interrupted ? ErrorKind::interrupted
                                        : ErrorKind::slurm;
    return std::unexpected(undo(out, progress, kind, std::move(ids.error().error),
                                std::move(ids.error().rollback), slurm, context));
  }
  out.ids = *ids;
  // Without this the chain stays "submitting", which the next status takes for an abandoned
  // submit and cancels: better now, said.
  if (auto w = record_state(out.chain.run_dir, ManifestState::submitted); !w)
    return std::unexpected(undo(out, progress, ErrorKind::local, w.error(), std::nullopt, slurm, context));
  out.manifest.state = ManifestState::submitted;
  if (out.cache) {
    // A record that cannot be written leaves the chain running: only the next chain of the key
    // may then compile again.
    auto note = record_cache(*out.cache, out.chain, out.manifest.created, out.ids, false);
    if (note) out.cache_note = std::move(*note);
    if (!note) out.problems.push_back(note.error());
  }
  return {};
}

}  // namespace

std::expected<SubmitOutcome, SubmitError> submit_chain_of_recipe(const Recipe& recipe, const Plan& plan,
                                                                 const SubmitRequest& request,
                                                                 SlurmClient& slurm,
                                                                 const SubmitContext& context) {
  const auto plan_doc = to_json(plan);
  // Another chain's checkpoints are only ever resumed from when asked, and never while that chain
  // may still write or prune them.
  std::string resume_from;
  if (!request.resume_from.empty()) {
    auto source = find_resume_source(request.runs_dir, request.resume_from, slurm);
    if (!source) return failed(ErrorKind::input, source.error());
    resume_from = source->checkpoint_dir.string();
    context.resuming(*source);
  }
  auto cache = prepare_cache(recipe, plan, request.precompile, request.dry_run, request.site);
  if (!cache) return failed(ErrorKind::input, cache.error());
  if (*cache)
    if (auto live = find_live_compile(**cache, request.dry_run, slurm); !live)
      return failed(ErrorKind::slurm, live.error());

  auto placed = place_chain(recipe, plan_doc, request, resume_from, *cache, slurm, context);
  if (!placed) return std::unexpected(std::move(placed.error()));
  SubmitOutcome out;
  if (*cache) out.cache.emplace(std::move(**cache));
  if (!*placed) {
    out.kind = SubmitKind::nothing_to_submit;
    if (out.cache) out.cache->lock.reset();
    return out;
  }
  out.kind = request.dry_run ? SubmitKind::dry_run : SubmitKind::submitted;
  out.chain = std::move((*placed)->chain);
  out.dirs = std::move((*placed)->dirs);
  // Held until the outcome is recorded: released when this function returns, however it returns.
  const auto lock = std::move((*placed)->lock);
  out.manifest = new_manifest(out.chain, out.dirs, resume_from,
                              request.dry_run ? ManifestState::dry_run : ManifestState::submitting,
                              iso_time(context.now()));
  Progress progress;
  // From here the run directory exists: every way out either completes or undoes the submit.
  try {
    const auto chain_plan = with_chain_dirs(plan_doc, out.dirs);
    // Marked before any job exists, so that a chain submitted next sees this one using it.
    if (!request.dry_run && is_local_dir(out.dirs.checkpoint))
      if (auto w = mark_dir_owner(out.dirs.checkpoint, DirOwner{out.chain.chain_id, out.chain.run_dir}); !w)
        return std::unexpected(
            undo(out, progress, ErrorKind::local, w.error(), std::nullopt, slurm, context));
    if (auto w = write_script(out.chain, 0); !w)
      return std::unexpected(undo(out, progress, ErrorKind::local, w.error(), std::nullopt, slurm, context));
    if (request.dry_run) {
      if (auto w = write_dry_run(out, recipe, chain_plan); !w)
        return std::unexpected(
            undo(out, progress, ErrorKind::local, w.error(), std::nullopt, slurm, context));
    } else if (auto s = submit_jobs(out, progress, recipe, chain_plan, slurm, context); !s) {
      return std::unexpected(std::move(s.error()));
    }
  } catch (const std::exception& e) {
    return std::unexpected(undo(out, progress, ErrorKind::internal, Error{e.what(), "submit", ""},
                                std::nullopt, slurm, context));
  }
  if (out.cache) out.cache->lock.reset();
  return out;
}

}  // namespace trnslurm
