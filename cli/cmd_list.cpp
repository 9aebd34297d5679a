// `trnslurm list`: the chains of the runs directory, with their state from one squeue call.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <ranges>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"

namespace trnslurm::cli {

namespace {

struct Options {
  ChainOptions chain;
  bool json = false;
};

int run(const Options& o) {
  const auto runs = resolve_runs_dir(o.chain);
  std::vector<Manifest> chains;
  std::vector<JobId> ids;
  for (const auto& dir : list_run_dirs(runs)) {
    auto m = read_manifest(dir);
    if (!m) {
      print_error(m.error());
      continue;
    }
    // Jobs seen ended are not asked about again (chain_jobs.hpp).
    const auto ask = ids_to_ask(stage_refs(*m));
    ids.insert(ids.end(), ask.begin(), ask.end());
    chains.push_back(std::move(*m));
  }
  if (chains.empty() && o.json) {
    fmt::print("[]\n");
    return exit_ok;
  }
  if (chains.empty()) {
    fmt::print("no chain in {}\n", runs.string());
    return exit_ok;
  }
  auto slurm = slurm_client();
  auto rows = slurm.squeue(ids);
  if (!rows) {
    return exit_with(rows.error(), ErrorKind::slurm);
  }
  if (o.json) {
    auto out = nlohmann::json::array();
    for (const auto& m : chains) {
      const auto status = evaluate_chain(stage_refs(m), *rows, std::nullopt);
      auto stages = nlohmann::json::array();
      for (const auto& s : m.stages)
        stages.push_back(
            {{"stage", s.name}, {"job_id", s.job_id ? nlohmann::json(*s.job_id) : nlohmann::json(nullptr)}});
      out.push_back(
          {{"chain_id", m.chain_id},
           {"created", m.created},
           {"state", to_string(m.state)},
           {"verdict", m.state == ManifestState::submitted ? nlohmann::json(to_string(status.verdict))
                                                           : nlohmann::json(nullptr)},
           {"run_dir", m.run_dir.string()},
           {"checkpoint_dir",
            m.checkpoint_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.checkpoint_dir)},
           {"stages", stages}});
    }
    fmt::print("{}\n", out.dump(2));
    return exit_ok;
  }
  fmt::print("{:<26} {:<21} {:<12} {:<10} {:<36} {}\n", "CHAIN", "CREATED", "SUBMIT", "STATUS", "STAGES",
             "CHECKPOINTS");
  for (const auto& m : chains) {
    const auto status = evaluate_chain(stage_refs(m), *rows, std::nullopt);
    const auto stages =
        fmt::format("{}", fmt::join(m.stages | std::views::transform(&StageRecord::name), ","));
    const auto verdict = m.state == ManifestState::submitted ? std::string(to_string(status.verdict)) : "-";
    fmt::print("{:<26} {:<21} {:<12} {:<10} {:<36} {}\n", m.chain_id, m.created, to_string(m.state), verdict,
               stages, m.checkpoint_dir.empty() ? "-" : m.checkpoint_dir);
  }
  return exit_ok;
}

}  // namespace

Command add_list(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("list", "List the chains of this directory");
  add_chain_options(*sub, opts->chain, false);
  sub->add_flag("--json", opts->json, "Print the chains as a JSON array");
  sub->footer(
      "Exit code: 0 listed (also when there is no chain), 1 Slurm could not be asked.\n"
      "Examples:\n"
      "  trnslurm list\n"
      "  trnslurm list --runs-dir /fsx/runs --json | jq -r '.[] | select(.verdict == \"failed\") | "
      ".chain_id'");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
