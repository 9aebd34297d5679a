// `trnslurm submit`: renders the recipe's stages and submits them as one afterok chain,
// atomically (docs/chain.md).
#include <sys/stat.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "install_paths.hpp"
#include "output.hpp"
#include "process.hpp"
#include "recipe_options.hpp"
#include "submit_cache.hpp"
#include "trnslurm/chain/chain_dirs.hpp"
#include "trnslurm/chain/chain_recipe.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/chain/upstream_stage.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {
namespace {
namespace fs = std::filesystem;

struct Options {
  RecipeOptions recipe;
  DatasetOptions dataset;
  StageSelection selection;
  bool dry_run = false;
  bool json = false;
  std::string runs_dir;
  std::string resume_from;  // a chain id, its run directory or a checkpoint directory
  std::string partition;
  std::string account;
  std::string qos;
  std::optional<bool> exclusive;
  std::vector<std::string> sbatch_args;
  std::vector<std::string> stage_args;  // STAGE=ARG
  std::string precompile = "auto";      // docs/cache.md
};

std::string now_iso() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

// How the dry run shows a command line: each word shell-quoted unless plain.
std::string display(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                         "-_=:/.,+%@<>") == std::string::npos;
    if (!out.empty()) out += ' ';
    out += plain ? a : shell_quote(a).value_or("<unprintable>");
  }
  return out;
}

Result<void> apply_flags(const Options& args, ChainSpec& chain) {
  if (!args.partition.empty()) chain.slurm.partition = args.partition;
  if (!args.account.empty()) chain.slurm.account = args.account;
  if (!args.qos.empty()) chain.slurm.qos = args.qos;
  if (args.exclusive) chain.slurm.exclusive = *args.exclusive;
  chain.slurm.sbatch_args.insert(chain.slurm.sbatch_args.end(), args.sbatch_args.begin(),
                                 args.sbatch_args.end());
  for (const auto& sa : args.stage_args) {
    const auto eq = sa.find('=');
    const auto name = sa.substr(0, eq);
    auto it = std::find_if(chain.stages.begin(), chain.stages.end(),
                           [&](const StageSpec& s) { return s.name == name; });
    if (eq == std::string::npos || it == chain.stages.end()) {
      return fail(fmt::format("'{}' does not name a stage of this chain", sa), "--stage-arg",
                  "write STAGE=ARG, e.g. --stage-arg convert=--partition=cpu");
    }
    it->sbatch_args.push_back(sa.substr(eq + 1));
  }
  return {};
}

// What --json prints: the chain, its run directory and per stage the job id (null in a dry run)
// and the sbatch command line.
std::string submit_json(const ChainSpec& chain, const Manifest& manifest, bool dry_run,
                        const std::vector<std::vector<std::string>>& argvs, const std::string& cache_note) {
  auto stages = nlohmann::json::array();
  for (std::size_t k = 0; k < chain.stages.size(); ++k) {
    const auto& id = manifest.stages[k].job_id;
    stages.push_back({{"stage", chain.stages[k].name},
                      {"job_id", id && !dry_run ? nlohmann::json(*id) : nlohmann::json(nullptr)},
                      {"sbatch_argv", argvs[k]}});
  }
  nlohmann::json j{{"chain_id", chain.chain_id},
                   {"run_dir", chain.run_dir.string()},
                   {"checkpoint_dir", manifest.checkpoint_dir},
                   {"resume_from", manifest.resume_from.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(manifest.resume_from)},
                   {"dry_run", dry_run},
                   {"stages", stages}};
  j["compile_cache"] = cache_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(cache_note);
  return j.dump(2) + "\n";
}

// The manifest before any job id is known.
Manifest new_manifest(const ChainSpec& chain, const ChainDirs& dirs, const std::string& resume_from,
                      ManifestState state) {
  Manifest m;
  m.chain_id = chain.chain_id;
  m.created = now_iso();
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

int run(const Options& args) {
  const auto planned = load_and_plan(args.recipe, args.dataset);
  if (!planned) {
    print_error(planned.error());
    return exit_usage;
  }
  const auto* recipe = &planned->recipe;
  const auto* plan = &planned->plan;
  for (const auto& w : plan->warnings) print_warning(w);
  const auto plan_doc = to_json(*plan);
  const fs::path runs = args.runs_dir.empty() ? fs::path(recipe->run.runs_dir) : fs::absolute(args.runs_dir);
  CommandSlurmClient slurm(process_runner(RunOptions{.own_process_group = true}));
  // Another chain's checkpoints are only ever resumed from when asked, and never while that chain
  // may still write or prune them.
  std::string resume_from;
  if (!args.resume_from.empty()) {
    auto source = find_resume_source(runs, args.resume_from, slurm);
    if (!source) {
      print_error(source.error());
      return exit_usage;
    }
    resume_from = source->checkpoint_dir.string();
    fmt::print(stderr, "trnslurm: resuming from step {} of {}{}\n", source->step, resume_from,
               source->chain ? fmt::format(" (chain {})", source->chain->chain_id) : "");
  }
  const TemplateValues site{{"backend_dir", backend_dir().string()}, {"trnslurm_bin", self_exe().string()}};
  const auto mode = parse_precompile_mode(args.precompile);
  if (!mode) {
    print_error(mode.error());
    return exit_usage;
  }
  auto cache = prepare_cache(*recipe, *plan, *mode, args.dry_run, site);
  if (!cache) {
    print_error(cache.error());
    return cache.error().where == "squeue" ? exit_failure : exit_usage;
  }

  // The run directory is created with mkdir: a collision (same second, same random draw) retries.
  // arc4random rather than std::random_device, whose start-up probes the CPU with cpuid, which
  // traps to the hypervisor on a virtual machine.
  Result<ChainSpec> chain = fail("no chain id", "submit");
  ChainDirs dirs;
  std::optional<SubmitLock> lock;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto id = make_chain_id(std::chrono::system_clock::now(), ::arc4random());
    auto inputs = chain_inputs_from_recipe(*recipe, plan_doc, id, runs / id, site);
    if (!inputs) {
      print_error(inputs.error());
      return exit_usage;
    }
    inputs->selection = args.selection;
    if (*cache) cache_inputs(**cache, *inputs);
    inputs->resume_from = resume_from;
    dirs = chain_dirs(recipe->checkpoint, id);
    // Only with checkpoint.per_chain = false can another chain have marked it.
    if (is_local_dir(dirs.checkpoint))
      if (auto free = check_dir_not_in_use(dirs.checkpoint, id, "checkpoint.dir", slurm); !free) {
        print_error(free.error());
        return exit_usage;
      }
    // Before anything is submitted: a missing script would fail inside a job, hours later. A dry
    // run only warns, so that scripts can be rendered where the cluster's files are not.
    if (auto files = check_upstream_files(*recipe, inputs->values); !files) {
      if (!args.dry_run) {
        print_error(files.error());
        return exit_usage;
      }
      print_warning(fmt::format("{} ({}); {}", files.error().what, files.error().where, files.error().hint));
    }
    chain = render_chain(*inputs);
    if (!chain) {
      print_error(chain.error());
      return exit_usage;
    }
    if (auto f = apply_flags(args, *chain); !f) {
      print_error(f.error());
      return exit_usage;
    }
    if (*cache) apply_cache(**cache, *chain);
    if (chain->stages.empty()) {
      // Only the precompile was selected, and the cache is warm (or --precompile=never).
      const auto& c = **cache;
      fmt::print(
          "compile key {}: {}; nothing to submit\n", c.key.hex,
          c.warm && c.mode != PrecompileMode::never
              ? fmt::format("precompile skipped: cache warm since {}, chain {}", c.warm->since, c.warm->chain)
              : std::string("precompile not run (--precompile=never)"));
      return exit_ok;
    }
    auto dir = create_run_dir(runs, id);
    if (dir) {
      // Before anything says "submitting": a status that finds that state without this lock
      // cancels what the submit left behind.
      if (args.dry_run) break;
      auto locked = lock_submission(*dir);
      if (!locked) {
        print_error(locked.error());
        return exit_failure;
      }
      lock.emplace(std::move(*locked));
      break;
    }
    if (attempt == 4) {
      print_error(dir.error());
      return exit_failure;
    }
  }
  auto manifest = new_manifest(*chain, dirs, resume_from,
                               args.dry_run ? ManifestState::dry_run : ManifestState::submitting);
  const auto chain_plan = with_chain_dirs(plan_doc, dirs);
  // Marked before any job exists, so that a chain submitted next sees this one using it.
  if (!args.dry_run && is_local_dir(dirs.checkpoint))
    if (auto w = mark_dir_owner(dirs.checkpoint, DirOwner{chain->chain_id, chain->run_dir}); !w) {
      print_error(w.error());
      return exit_failure;
    }
  if (auto w = chain->stages.empty() ? Result<void>{} : write_script(*chain, 0); !w) {
    print_error(w.error());
    return exit_failure;
  }

  std::string cache_note;
  const auto note_cache = [&](const std::vector<JobId>& ids) {
    if (!*cache) return true;
    auto note = record_cache(**cache, *chain, manifest.created, ids, args.dry_run);
    if (!note) print_error(note.error());
    if (note) cache_note = std::move(*note);
    (*cache)->lock.reset();
    return note.has_value();
  };
  if (args.dry_run) {
    if (auto w = write_records(*chain, *recipe, chain_plan, manifest); !w) {
      print_error(w.error());
      return exit_failure;
    }
    if (!note_cache({})) return exit_failure;
    if (args.json) {
      std::vector<std::vector<std::string>> argvs;
      for (std::size_t k = 0; k < chain->stages.size(); ++k) {
        auto argv = manifest.stages[k].sbatch_argv;
        for (auto& a : argv) {
          if (k > 0 && a == "--dependency=afterok:0")
            a = fmt::format("--dependency=afterok:<job id of {}>", chain->stages[k - 1].name);
        }
        argvs.push_back(std::move(argv));
      }
      fmt::print("{}", submit_json(*chain, manifest, true, argvs, cache_note));
      return exit_ok;
    }
    fmt::print("chain {} (dry run: nothing submitted)\nrun directory {}\ncheckpoints {}\n", chain->chain_id,
               chain->run_dir.string(), dirs.checkpoint);
    for (std::size_t k = 0; k < chain->stages.size(); ++k) {
      auto line = display(manifest.stages[k].sbatch_argv);
      if (k > 0) {
        const auto dep = std::string("--dependency=afterok:0");
        if (const auto at = line.find(dep); at != std::string::npos)
          line.replace(at, dep.size(),
                       fmt::format("--dependency=afterok:<job id of {}>", chain->stages[k - 1].name));
      }
      fmt::print("{}\n", line);
    }
    if (!cache_note.empty()) fmt::print("{}\n", cache_note);
    return exit_ok;
  }

  install_interrupt_flag();
  // The rest of the run directory is written on a second thread while the first sbatch runs: each
  // new file is a metadata round trip (~140 us on the development machine's ext4, more on a shared
  // file system), and sbatch mostly waits for slurmctld. The first submitted hook waits for it, so
  // every script exists before its sbatch and the manifest before any job id is recorded.
  auto records =
      std::async(std::launch::async, [&] { return write_records(*chain, *recipe, chain_plan, manifest); });
  SubmitHooks hooks;
  hooks.submitted = [&](std::size_t k, JobId id) -> Result<void> {
    if (records.valid())
      if (auto w = records.get(); !w) return w;
    manifest.stages[k].job_id = id;
    // On disk before the next sbatch: a crash now still leaves every id in the run directory.
    return record_job(chain->run_dir, chain->stages[k].name, id);
  };
  hooks.interrupted = [] { return interrupted(); };
  hooks.pause = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  auto ids = submit_chain(*chain, slurm, hooks);
  if (records.valid()) (void)records.get();  // the first sbatch failed: the records are moot
  if (!ids) {
    const auto& f = ids.error();
    const auto state =
        f.rollback.remaining.empty() ? ManifestState::rolled_back : ManifestState::rollback_failed;
    if (auto w = record_state(chain->run_dir, state); !w) print_error(w.error());
    print_error(f.error);
    if (!f.rollback.remaining.empty()) {
      fmt::print(stderr,
                 "trnslurm: chain {} not submitted: rollback failed: jobs {} may still be in the queue; "
                 "'trnslurm cancel {}' or the next 'trnslurm status' cancels them\n",
                 chain->chain_id, fmt::join(f.rollback.remaining, ","), chain->chain_id);
    } else if (!f.rollback.cancelled.empty()) {
      fmt::print(stderr, "trnslurm: chain {} not submitted: cancelled jobs {} already submitted for it\n",
                 chain->chain_id, fmt::join(f.rollback.cancelled, ","));
    } else {
      fmt::print(stderr, "trnslurm: chain {} not submitted: no job had been submitted\n", chain->chain_id);
    }
    return exit_failure;
  }
  if (auto w = record_state(chain->run_dir, ManifestState::submitted); !w) print_error(w.error());
  // A record that cannot be written leaves the chain running: only the next chain of the key
  // may then compile again.
  (void)note_cache(*ids);
  if (args.json) {
    std::vector<std::vector<std::string>> argvs;
    for (std::size_t k = 0; k < ids->size(); ++k)
      argvs.push_back(sbatch_argv(*chain, k, k == 0 ? std::nullopt : std::optional<JobId>((*ids)[k - 1])));
    fmt::print("{}", submit_json(*chain, manifest, false, argvs, cache_note));
    return exit_ok;
  }
  std::string out = fmt::format("chain {} submitted\nrun directory {}\ncheckpoints {}\n", chain->chain_id,
                                chain->run_dir.string(), dirs.checkpoint);
  for (std::size_t k = 0; k < ids->size(); ++k)
    out += fmt::format("  {:<13} job {}\n", chain->stages[k].name, (*ids)[k]);
  if (!cache_note.empty()) out += cache_note + "\n";
  fmt::print("{}", out);
  return exit_ok;
}

}  // namespace

Command add_submit(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("submit", "Submit the recipe's stages as one afterok chain");
  add_recipe_options(*sub, opts->recipe);
  add_dataset_options(*sub, opts->dataset);
  sub->add_option("--only", opts->selection.only, "Submit only this stage")->type_name("STAGE");
  sub->add_option("--from", opts->selection.from, "Start the chain at this stage")->type_name("STAGE");
  sub->add_option("--until", opts->selection.until, "End the chain with this stage")->type_name("STAGE");
  sub->add_flag("--dry-run", opts->dry_run,
                "Write the run directory and print the sbatch commands; submit nothing");
  sub->add_flag("--json", opts->json, "Print the chain id, run directory, job ids and sbatch lines as JSON");
  sub->add_option("--runs-dir", opts->runs_dir,
                  "Where to create the run directory (default: the recipe's run.runs_dir)");
  sub->add_option("--resume-from", opts->resume_from,
                  "Start from the newest checkpoint of another chain (its id or run directory) or of a "
                  "checkpoint directory; the convert stage is left out")
      ->type_name("CHAIN|DIR");
  sub->add_option("--partition", opts->partition, "Slurm partition (overrides slurm.partition)");
  sub->add_option("--account", opts->account, "Slurm account (overrides slurm.account)");
  sub->add_option("--qos", opts->qos, "Slurm QOS (overrides slurm.qos)");
  sub->add_flag("--exclusive,!--no-exclusive", opts->exclusive,
                "Whole nodes per job (overrides slurm.exclusive)");
  sub->add_option("--sbatch-arg", opts->sbatch_args, "Extra sbatch argument for every stage (repeatable)")
      ->type_name("ARG")
      ->allow_extra_args(false);
  sub->add_option("--precompile", opts->precompile,
                  "auto: skip the precompile stage when the compile cache holds the chain's key (default); "
                  "always; never")
      ->type_name("auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->add_option("--stage-arg", opts->stage_args,
                  "Extra sbatch argument for one stage, STAGE=ARG (repeatable)")
      ->type_name("STAGE=ARG")
      ->allow_extra_args(false);
  sub->footer(
      "Exit codes: 0 submitted (or dry run written), 1 an sbatch failed or Ctrl-C: every job already\n"
      "submitted for the chain was cancelled, 2 bad recipe or option, or a checkpoint directory of a\n"
      "chain still queued (nothing submitted). Each chain writes its checkpoints under\n"
      "<checkpoint.dir>/<chain id>. Time limits and node counts per stage come from the recipe:\n"
      "--set stages.train.time=2-00:00:00.\n"
      "Examples:\n"
      "  trnslurm submit --dry-run                # write runs/<chain>/, print the sbatch lines\n"
      "  trnslurm submit --partition trn1 --set stages.train.time=2-00:00:00\n"
      "  trnslurm submit --only train --sbatch-arg=--mail-type=END\n"
      "  trnslurm submit --stage-arg=convert=--partition=cpu\n"
      "  trnslurm submit --resume-from 20261124-101500-123-0a1b2c3d --epochs 6\n"
      "  trnslurm submit --precompile=always       # compile even when the cache is warm\n"
      "  chain=$(trnslurm submit --json | jq -r .chain_id)");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
