// `trnslurm submit`: renders the recipe's stages and submits them as one afterok chain,
// atomically (docs/chain.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "install_paths.hpp"
#include "output.hpp"
#include "process.hpp"
#include "recipe_options.hpp"
#include "trainer_help.hpp"
#include "trnslurm/submit/submit_workflow.hpp"

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

// What --json prints: the chain, its run directory and per stage the job id (null in a dry run)
// and the sbatch command line.
std::string submit_json(const SubmitOutcome& o, const std::vector<std::vector<std::string>>& argvs) {
  const bool dry_run = o.kind == SubmitKind::dry_run;
  auto stages = nlohmann::json::array();
  for (std::size_t k = 0; k < o.chain.stages.size(); ++k) {
    stages.push_back({{"stage", o.chain.stages[k].name},
                      {"job_id", dry_run ? nlohmann::json(nullptr) : nlohmann::json(o.ids[k])},
                      {"sbatch_argv", argvs[k]}});
  }
  const auto& m = o.manifest;
  nlohmann::json j{
      {"chain_id", o.chain.chain_id},
      {"run_dir", o.chain.run_dir.string()},
      {"checkpoint_dir", m.checkpoint_dir},
      {"resume_from", m.resume_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.resume_from)},
      {"dry_run", dry_run},
      {"stages", stages}};
  j["compile_cache"] = o.cache_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.cache_note);
  return j.dump(2) + "\n";
}

// The sbatch lines of a dry run, each dependency named by the stage it waits for.
std::string dry_run_dependency(const SubmitOutcome& o, std::size_t k) {
  return fmt::format("--dependency=afterok:<job id of {}>", o.chain.stages[k - 1].name);
}

void print_dry_run(const SubmitOutcome& o, bool json) {
  const auto& chain = o.chain;
  if (json) {
    std::vector<std::vector<std::string>> argvs;
    for (std::size_t k = 0; k < chain.stages.size(); ++k) {
      auto argv = o.manifest.stages[k].sbatch_argv;
      for (auto& a : argv)
        if (k > 0 && a == "--dependency=afterok:0") a = dry_run_dependency(o, k);
      argvs.push_back(std::move(argv));
    }
    fmt::print("{}", submit_json(o, argvs));
    return;
  }
  fmt::print("chain {} (dry run: nothing submitted)\nrun directory {}\ncheckpoints {}\n", chain.chain_id,
             chain.run_dir.string(), o.dirs.checkpoint);
  for (std::size_t k = 0; k < chain.stages.size(); ++k) {
    auto line = display(o.manifest.stages[k].sbatch_argv);
    if (k > 0) {
      const auto dep = std::string("--dependency=afterok:0");
      if (const auto at = line.find(dep); at != std::string::npos)
        line.replace(at, dep.size(), dry_run_dependency(o, k));
    }
    fmt::print("{}\n", line);
  }
  if (!o.cache_note.empty()) fmt::print("{}\n", o.cache_note);
}

void print_submitted(const SubmitOutcome& o, bool json) {
  const auto& chain = o.chain;
  for (const auto& p : o.problems) print_error(p);
  if (json) {
    std::vector<std::vector<std::string>> argvs;
    for (std::size_t k = 0; k < o.ids.size(); ++k)
      argvs.push_back(sbatch_argv(chain, k, k == 0 ? std::nullopt : std::optional<JobId>(o.ids[k - 1])));
    fmt::print("{}", submit_json(o, argvs));
    return;
  }
  std::string out = fmt::format("chain {} submitted\nrun directory {}\ncheckpoints {}\n", chain.chain_id,
                                chain.run_dir.string(), o.dirs.checkpoint);
  for (std::size_t k = 0; k < o.ids.size(); ++k)
    out += fmt::format("  {:<13} job {}\n", chain.stages[k].name, o.ids[k]);
  if (!o.cache_note.empty()) out += o.cache_note + "\n";
  fmt::print("{}", out);
}

int print_failure(const SubmitError& f) {
  for (const auto& p : f.problems) print_error(p);
  if (f.kind == ErrorKind::internal) {
    print_error(Error{fmt::format("internal error: {}", f.error.what), f.error.where, f.error.hint});
  } else {
    print_error(f.error);
  }
  if (f.submission_started) {
    const auto& rb = f.rollback;
    if (!rb.remaining.empty()) {
      fmt::print(stderr,
                 "trnslurm: chain {} not submitted: rollback failed: jobs {} may still be in the queue; "
                 "'trnslurm cancel {}' or the next 'trnslurm status' cancels them\n",
                 f.chain_id, fmt::join(rb.remaining, ","), f.chain_id);
    } else if (!rb.cancelled.empty()) {
      fmt::print(stderr, "trnslurm: chain {} not submitted: cancelled jobs {} already submitted for it\n",
                 f.chain_id, fmt::join(rb.cancelled, ","));
    } else {
      fmt::print(stderr, "trnslurm: chain {} not submitted: no job had been submitted\n", f.chain_id);
    }
  }
  return exit_code(f.kind);
}

// The installed trainer asked about the train stage's flags, as `doctor --recipe` does, before
// anything is queued (docs/upstream.md): TorchTitan moves faster than the interface record, and
// the record cannot know the fork's own changes. A flag its --help does not list refuses the
// submission; a trainer that cannot be asked (no free node within 30 s, no venv on this host) is a
// warning: the flags were checked against the record when the recipe loaded.
Result<void> installed_trainer_accepts(const Recipe& recipe) {
  const auto checked = check_installed_trainer(recipe);
  if (!checked) {
    print_warning(
        fmt::format("{} ({}); {}; the train stage's flags were checked against the interface "
                    "record only",
                    checked.error().what, checked.error().where, checked.error().hint));
    return {};
  }
  if (checked->not_listed.empty()) return {};
  return fail(ErrorKind::input,
              fmt::format("the installed trainer's --help (asked on {}) lists none of {}: it would refuse "
                          "the train stage (exit 2)",
                          checked->where, fmt::join(checked->not_listed, ", ")),
              recipe.where("stages.train.args"),
              "remove or rename those flags for the trainer in upstream.venv (its --help lists what it "
              "takes), or install the release the recipe names; nothing was submitted");
}

// Whether the chain submits its train stage (--only, --from, --until); a selection that names no
// enabled stage is the workflow's to refuse.
bool submits_train(const StageSelection& selection) {
  std::vector<StageSpec> stages(4);
  for (std::size_t k = 0; const auto* name : {"convert", "precompile", "train", "convert_back"})
    stages[k++].name = name;
  const auto kept = select_stages(std::move(stages), selection);
  return !kept || std::ranges::any_of(*kept, [](const StageSpec& s) { return s.name == "train"; });
}

int run(const Options& args) {
  const auto planned = load_and_plan(args.recipe, args.dataset);
  if (!planned) {
    return exit_with(planned.error(), ErrorKind::input);
  }
  for (const auto& w : planned->plan.warnings) print_warning(w);
  if (!args.dry_run && submits_train(args.selection)) {
    if (auto accepted = installed_trainer_accepts(planned->recipe); !accepted)
      return exit_with(accepted.error(), ErrorKind::input);
  }
  const auto mode = parse_precompile_mode(args.precompile);
  if (!mode) {
    return exit_with(mode.error(), ErrorKind::input);
  }
  SubmitRequest request{
      .runs_dir =
          args.runs_dir.empty() ? fs::path(planned->recipe.run.runs_dir) : fs::absolute(args.runs_dir),
      .resume_from = args.resume_from,
      .selection = args.selection,
      .partition = args.partition,
      .account = args.account,
      .qos = args.qos,
      .exclusive = args.exclusive,
      .sbatch_args = args.sbatch_args,
      .stage_args = args.stage_args,
      .precompile = *mode,
      .dry_run = args.dry_run,
      .site = {{"backend_dir", backend_dir().string()}, {"trnslurm_bin", self_exe().string()}},
  };
  SubmitContext context;
  context.resuming = [](const ResumeSource& source) {
    fmt::print(stderr, "trnslurm: resuming from step {} of {}{}\n", source.step,
               source.checkpoint_dir.string(),
               source.chain ? fmt::format(" (chain {})", source.chain->chain_id) : "");
  };
  context.warning = [](const Error& e) {
    print_warning(fmt::format("{} ({}); {}", e.what, e.where, e.hint));
  };
  context.interrupted = [] { return interrupted(); };
  if (!args.dry_run) install_interrupt_flag();
  auto slurm = slurm_client(RunOptions{.own_process_group = true});
  const auto done = submit_chain_of_recipe(planned->recipe, planned->plan, request, slurm, context);
  if (!done) return print_failure(done.error());
  switch (done->kind) {
    case SubmitKind::nothing_to_submit:
      fmt::print("compile key {}: {}; nothing to submit\n", done->cache->key.hex,
                 nothing_to_compile(*done->cache));
      break;
    case SubmitKind::dry_run:
      print_dry_run(*done, args.json);
      break;
    case SubmitKind::submitted:
      print_submitted(*done, args.json);
      break;
  }
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
