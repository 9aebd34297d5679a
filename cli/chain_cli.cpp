#include "chain_cli.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

#include "colour.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"
#include "progress_cli.hpp"
#include "trnslurm/cache/precompile_decision.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/printable.hpp"

namespace trnslurm::cli {
namespace fs = std::filesystem;

namespace {
volatile std::sig_atomic_t interrupt_flag = 0;
extern "C" void on_interrupt(int) {
  interrupt_flag = 1;
}

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

// What status knows of a stage whose end nothing recorded, and what to run to find out.
std::string format_evidence(const StageEvidence& e) {
  std::string out = fmt::format("  what is known of {}:\n", e.stage);
  if (e.checkpoint_step)
    out +=
        fmt::format("    newest checkpoint: step {} ({:%Y-%m-%d %H:%M:%S} UTC) in {}\n", *e.checkpoint_step,
                    fmt::gmtime(static_cast<std::time_t>(e.checkpoint_time)), e.checkpoint_dir);
  else if (!e.checkpoint_dir.empty())
    out += fmt::format("    newest checkpoint: none completed in {}\n", e.checkpoint_dir);
  if (!e.export_dir.empty())
    out += e.export_entries && *e.export_entries > 0
               ? fmt::format("    exported model: {} ({} entries)\n", e.export_dir, *e.export_entries)
               : fmt::format("    exported model: none in {}\n", e.export_dir);
  out += e.last_log_line.empty() ? fmt::format("    log {}: empty or missing\n", e.log)
                                 : fmt::format("    last line of {}: {}\n", e.log, e.last_log_line);
  out += "  to find out:\n";
  for (const auto& c : e.to_run) out += fmt::format("    {}\n", c);
  return out;
}

nlohmann::json evidence_json(const StageEvidence& e) {
  const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {
      {"stage", e.stage},
      {"checkpoint_step", opt(e.checkpoint_step)},
      {"checkpoint_time", e.checkpoint_step ? nlohmann::json(e.checkpoint_time) : nlohmann::json(nullptr)},
      {"checkpoint_dir", e.checkpoint_dir},
      {"export_dir", e.export_dir},
      {"export_entries", opt(e.export_entries)},
      {"log", e.log},
      {"last_log_line", e.last_log_line},
      {"to_run", e.to_run}};
}

int exit_code_for(ChainVerdict verdict) {
  switch (verdict) {
    case ChainVerdict::succeeded:
      return exit_ok;
    case ChainVerdict::running:
    case ChainVerdict::unknown:  // never 1: a stage Slurm forgot is not a stage that failed
      return exit_running;
    case ChainVerdict::held:
      return exit_held;
    case ChainVerdict::failed:
      return exit_failure;
  }
  return exit_failure;
}

}  // namespace

// An empty chain id given (an unset variable in a script) is refused rather than read as "the
// newest chain": `cancel "$CHAIN"` must not cancel another chain.
CLI::Validator given_chain_id() {
  return CLI::Validator(
      [](std::string& id) -> std::string {
        return id.empty() ? "an empty chain id selects nothing (leave it out for the newest chain)" : "";
      },
      "CHAIN");
}

void add_chain_options(CLI::App& app, ChainOptions& options, bool with_chain) {
  if (with_chain) {
    app.add_option("chain", options.chain, "Chain id (default: the newest chain of the runs directory)")
        ->check(given_chain_id());
  }
  app.add_option("--runs-dir", options.runs_dir,
                 "Where run directories live (default: run.runs_dir of ./trnslurm.toml, else ./runs)");
  app.add_option("-r,--recipe", options.recipe, "Recipe whose run.runs_dir to use")->capture_default_str();
}

fs::path resolve_runs_dir(const ChainOptions& options) {
  if (!options.runs_dir.empty()) return options.runs_dir;
  return runs_dir_named_by(options.recipe);
}

Result<LoadedChain> load_chain(const ChainOptions& options, SlurmClient& slurm) {
  return trnslurm::load_chain(resolve_runs_dir(options), options.chain, slurm);
}

int follow_statuses(
    const ChainOptions& options, const std::vector<std::string>& ids,
    const std::function<bool(const std::vector<LoadedChain>&, const std::vector<ChainStatus>&)>& show) {
  auto slurm = slurm_client();
  std::vector<LoadedChain> chains;
  for (const auto& id : ids.empty() ? std::vector<std::string>{options.chain} : ids) {
    auto chain = trnslurm::load_chain(resolve_runs_dir(options), id, slurm);
    if (!chain) {
      return exit_with(chain.error(), ErrorKind::input);
    }
    chains.push_back(std::move(*chain));
  }
  for (;;) {
    auto statuses = refresh_statuses(chains, slurm, pause_for);
    // Ctrl-C reaches the whole foreground group: squeue, killed by it, is no answer from Slurm.
    if (!statuses && interrupted()) return exit_running;
    if (!statuses) {
      return exit_with(statuses.error(), ErrorKind::slurm);
    }
    const bool go_on = show(chains, *statuses);
    if (!go_on || std::none_of(statuses->begin(), statuses->end(), may_change)) {
      return exit_code_for(worst_verdict(*statuses));
    }
  }
}

int follow_status(const ChainOptions& options,
                  const std::function<bool(const LoadedChain&, const ChainStatus&)>& show) {
  return follow_statuses(
      options, {}, [&](const std::vector<LoadedChain>& chains, const std::vector<ChainStatus>& statuses) {
        return show(chains.front(), statuses.front());
      });
}

StatusRecords read_status_records(const LoadedChain& chain) {
  if (!chain.manifest) return {};
  return {chain_cache_now(chain.manifest->run_dir), read_restarts(chain.manifest->run_dir)};
}

std::string format_status(const LoadedChain& chain, const ChainStatus& status, const StatusRecords& records,
                          bool colour, const std::optional<ProgressSummary>& progress) {
  std::string out = fmt::format("chain {}{}\n", chain.chain_id,
                                chain.manifest ? fmt::format("  ({})", chain.manifest->run_dir.string())
                                               : std::string("  (from Slurm alone: no run directory)"));
  if (chain.manifest && !chain.manifest->checkpoint_dir.empty())
    out += fmt::format("  checkpoints {}{}\n", chain.manifest->checkpoint_dir,
                       chain.manifest->resume_from.empty()
                           ? std::string()
                           : fmt::format("  (resumed from {})", chain.manifest->resume_from));
  out += fmt::format("  {:<13} {:>8}  {:<10} {:<26} {:>10} {:>5}  {}\n", "STAGE", "JOBID", "STATE", "REASON",
                     "ELAPSED", "NODES", "EXIT");
  for (const auto& s : status.stages) {
    // Padded first, painted after: escape codes must not count towards the column width.
    const auto state = fmt::format("{:<10}", s.state);
    const auto painted =
        paint(s.state, state_colour(to_string(s.phase)), colour) + state.substr(s.state.size());
    out += fmt::format("  {:<13} {:>8}  {} {:<26} {:>10} {:>5}  {}{}\n", s.name,
                       s.job_id ? std::to_string(*s.job_id) : "-", painted, or_dash(s.reason),
                       or_dash(s.elapsed), or_dash(s.nodes), or_dash(s.exit_code),
                       s.note.empty() ? "" : "  " + s.note);
  }
  if (progress) out += format_progress(*progress, colour);
  if (records.cache)
    out += fmt::format("  {} (compile key {})\n", records.cache->note, records.cache->cache.key);
  for (const auto& e : records.restarts) {
    if (e.event == "restart") {
      out += fmt::format(
          "  train restart {} (job {}, {:%Y-%m-%d %H:%M:%S} UTC): {}; resumed from {}\n", e.restart, e.job,
          fmt::gmtime(static_cast<std::time_t>(e.time)), describe_cause(e.cause),
          e.resumed_from ? fmt::format("step {}", *e.resumed_from) : "the start (no checkpoint)");
    } else if (e.event == "exclude") {
      out +=
          fmt::format("  train excluded {} (job {}, {:%Y-%m-%d %H:%M:%S} UTC): {}\n", fmt::join(e.nodes, ","),
                      e.job, fmt::gmtime(static_cast<std::time_t>(e.time)), printable(e.why));
      if (!e.drain.empty()) out += fmt::format("    {}\n", printable(e.drain));
    } else if (e.event == "gave-up") {
      if (!e.drain.empty()) out += fmt::format("  train gave up; {}\n", printable(e.drain));
    }
  }
  if (chain.leftovers && !(chain.leftovers->cancelled.empty() && chain.leftovers->remaining.empty())) {
    const auto& l = *chain.leftovers;
    out += fmt::format("  the submit of this chain was interrupted: cancelled {} job(s) it left ({})",
                       l.cancelled.size(), fmt::join(l.cancelled, ","));
    if (!l.remaining.empty())
      out += fmt::format("; still queued: {} (run status or cancel again)", fmt::join(l.remaining, ","));
    out += "\n";
  }
  if (status.evidence) out += format_evidence(*status.evidence);
  const auto gave_up = last_gave_up(records.restarts);
  out += paint(to_string(status.verdict), state_colour(to_string(status.verdict)), colour);
  if (gave_up && gave_up->max_exclusions) {
    out += fmt::format(": train gave up: {} failed the pre-flight with max_exclusions = {} used up: {}",
                       fmt::join(gave_up->nodes, ","), gave_up->max_exclusions.value_or(0),
                       printable(gave_up->why));
  } else if (gave_up) {
    out += fmt::format(": train gave up after {} restarts (max_restarts = {}): {}", gave_up->restart,
                       gave_up->max_restarts.value_or(0), describe_cause(gave_up->cause));
  }
  if (status.failed_stage) {
    const auto& f = status.stages[*status.failed_stage];
    out += fmt::format("{}{} {}", gave_up ? "; " : ": ", f.name, to_string(f.phase));
    if (chain.manifest && f.job_id) {
      out += fmt::format(", log {}", output_path(chain.manifest->run_dir, f.name, *f.job_id).string());
    }
  } else if (status.verdict == ChainVerdict::held) {
    const auto& h = status.stages[*status.held_stage];
    out += fmt::format(": {} {}", h.name, h.note);
  } else if (status.verdict == ChainVerdict::unknown && status.unknown_stage) {
    const auto& u = status.stages[*status.unknown_stage];
    out += fmt::format(": how {} ended is not known ({})", u.name, u.note);
    if (u.source != "record")
      out += "; its job left no outcome record: enable accounting, or run status more often than MinJobAge";
  }
  out += "\n";
  return out;
}

std::string status_json(const LoadedChain& chain, const ChainStatus& status, const StatusRecords& records,
                        const std::optional<ProgressSummary>& progress) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : status.stages) {
    nlohmann::json j{
        {"stage", s.name},      {"state", s.state}, {"phase", to_string(s.phase)}, {"reason", s.reason},
        {"elapsed", s.elapsed}, {"nodes", s.nodes}, {"exit_code", s.exit_code},    {"note", s.note},
        {"source", s.source},   {"host", s.host}};
    j["job_id"] = s.job_id ? nlohmann::json(*s.job_id) : nlohmann::json(nullptr);
    if (chain.manifest && s.job_id)
      j["log"] = output_path(chain.manifest->run_dir, s.name, *s.job_id).string();
    stages.push_back(std::move(j));
  }
  nlohmann::json j{{"chain_id", chain.chain_id}, {"verdict", to_string(status.verdict)}, {"stages", stages}};
  j["run_dir"] = chain.manifest ? nlohmann::json(chain.manifest->run_dir.string()) : nlohmann::json(nullptr);
  const auto recorded = [&](const std::string Manifest::*field) {
    return chain.manifest && !((*chain.manifest).*field).empty() ? nlohmann::json((*chain.manifest).*field)
                                                                 : nlohmann::json(nullptr);
  };
  j["checkpoint_dir"] = recorded(&Manifest::checkpoint_dir);
  j["export_dir"] = recorded(&Manifest::export_dir);
  j["resume_from"] = recorded(&Manifest::resume_from);
  nlohmann::json restarts = nlohmann::json::array();
  for (const auto& e : records.restarts) restarts.push_back(to_json(e));
  j["restarts"] = std::move(restarts);
  j["progress"] = progress_json(progress);
  if (const auto& cache = records.cache) {
    j["compile_cache"] = {{"key", cache->cache.key},
                          {"precompile", to_string(cache->cache.use.precompile)},
                          {"note", cache->note}};
  } else {
    j["compile_cache"] = nullptr;
  }
  const auto stage_named = [&](const std::optional<std::size_t>& k) {
    return k ? nlohmann::json(status.stages[*k].name) : nlohmann::json(nullptr);
  };
  j["failed_stage"] = stage_named(status.failed_stage);
  j["held_stage"] = stage_named(status.held_stage);
  j["unknown_stage"] = stage_named(status.unknown_stage);
  j["evidence"] = status.evidence ? evidence_json(*status.evidence) : nlohmann::json(nullptr);
  return j.dump(2) + "\n";
}

std::optional<ProgressSummary> refresh_progress(TrainProgress& tracker, const LoadedChain& chain,
                                                const ChainStatus& status) {
  auto progress = tracker.refresh(chain, status, static_cast<std::int64_t>(std::time(nullptr)));
  if (!progress) {
    print_warning(to_string(progress.error()));
    return std::nullopt;
  }
  return *progress;
}

void pause_for(std::chrono::milliseconds d) {
  std::this_thread::sleep_for(d);
}

void install_interrupt_flag() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // the terminal closing mid-submit rolls back too
}

bool interrupted() {
  return interrupt_flag != 0;
}

}  // namespace trnslurm::cli
