// `trnslurm report [CHAIN]`: loss, learning rate and throughput against steps, restarts marked,
// drawn as PNG and SVG by Debian's python3-matplotlib in a child process (docs/progress.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

#include "chain_cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "process.hpp"
#include "report_texts.hpp"
#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/chain_progress.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm::cli {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view python = "/usr/bin/python3";  // Debian's, where python3-matplotlib is

struct Options {
  ChainOptions chain;
  std::string output;
  bool json = false;
};

std::string_view plot_script() {
  const auto texts = detail::report_texts();
  const auto it = std::ranges::find(texts, std::string_view("plot_progress"), &detail::ScriptText::name);
  return it == texts.end() ? std::string_view{} : it->text;
}

nlohmann::json nullable(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// What the picture is drawn from, also kept beside it (<output>.json).
nlohmann::json plot_data(const std::string& chain_id, const Manifest& manifest, const RunFigures& figures,
                         const ProgressSeries& series) {
  auto points = nlohmann::json::array();
  for (const auto& [attempt, p] : series.points) {
    const auto tokens = job_tokens_per_second(p, figures.seq_len, figures.world_size);
    points.push_back({attempt, p.step,
                      std::isfinite(p.loss) ? nlohmann::json(p.loss) : nlohmann::json(nullptr),
                      nullable(p.learning_rate), nullable(tokens)});
  }
  auto restarts = nlohmann::json::array();
  for (const auto& e : read_restarts(manifest.run_dir)) {
    if (e.event != "restart") continue;
    restarts.push_back({{"restart", e.restart},
                        {"step", e.resumed_from.value_or(0)},
                        {"cause", e.cause},
                        {"label", fmt::format("restart {}: {}", e.restart, e.cause)}});
  }
  // A restart the log shows (the step went back) but the restarts log does not: marked where the
  // new attempt started.
  if (restarts.empty() && series.attempts > 1) {
    for (std::size_t i = 1; i < series.points.size(); ++i) {
      if (series.points[i].attempt == series.points[i - 1].attempt) continue;
      restarts.push_back({{"restart", series.points[i].attempt},
                          {"step", series.points[i].point.step},
                          {"cause", "unknown"},
                          {"label", fmt::format("restart {}", series.points[i].attempt)}});
    }
  }
  return {{"title", fmt::format("chain {}: {} step lines, {} restart(s)", chain_id, series.step_lines,
                                restarts.size())},
          {"total_steps", figures.total_steps},
          {"seq_len", figures.seq_len},
          {"attempts", series.attempts},
          {"points", points},
          {"restarts", restarts}};
}

int run(const Options& o) {
  auto run_dir = find_run_dir(resolve_runs_dir(o.chain), o.chain.chain);
  if (!run_dir) {
    return exit_with(run_dir.error(), ErrorKind::input);
  }
  auto manifest = read_manifest(*run_dir);
  auto figures =
      manifest ? read_run_figures(*run_dir) : Result<RunFigures>(std::unexpected(manifest.error()));
  if (!figures) {
    return exit_with(figures.error(), ErrorKind::input);
  }
  const auto stage = std::ranges::find(manifest->stages, std::string_view("train"), &StageRecord::name);
  if (stage == manifest->stages.end() || !stage->job_id) {
    return exit_with(Error{"the chain has no submitted train stage: nothing to draw", run_dir->string(),
                           "trnslurm report draws a chain that trained (trnslurm list shows them)"},
                     ErrorKind::input);
  }
  const auto log = output_path(*run_dir, stage->name, *stage->job_id);
  auto series = read_series(log, ProgressParser::bundled());
  if (!series) {
    return exit_with(series.error(), ErrorKind::local);
  }
  if (series->points.empty()) {
    return exit_with(Error{"no progress line in the train log yet", log.string(),
                           "wait for the trainer's first progress lines (trnslurm status shows them)"},
                     ErrorKind::refused);
  }
  const fs::path prefix = o.output.empty() ? *run_dir / "progress" : fs::path(o.output);
  const auto data_file = fs::path(prefix.string() + ".json");
  const auto png = fs::path(prefix.string() + ".png");
  const auto svg = fs::path(prefix.string() + ".svg");
  const auto data = plot_data(manifest->chain_id, *manifest, *figures, *series);
  if (auto w = write_file_atomic(data_file, data.dump() + "\n"); !w) {
    return exit_with(w.error(), ErrorKind::local);
  }
  auto drawn = run_process({std::string(python), "-c", std::string(plot_script()), data_file.string(),
                            png.string(), svg.string()});
  if (!drawn || drawn->exit_code != 0) {
    const std::string why = drawn ? drawn->err : drawn.error().what;
    const bool no_matplotlib = why.find("No module named 'matplotlib'") != std::string::npos;
    return exit_with(
        Error{fmt::format("drawing failed: {}", why.empty() ? "no message" : why), std::string(python),
              no_matplotlib ? "install Debian's python3-matplotlib (scripts/install-deps)"
                            : "the figures are in " + data_file.string()},
        ErrorKind::upstream);
  }
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"chain_id", manifest->chain_id},
                                      {"png", png.string()},
                                      {"svg", svg.string()},
                                      {"data", data_file.string()},
                                      {"step_lines", series->step_lines},
                                      {"attempts", series->attempts},
                                      {"restarts", data["restarts"].size()},
                                      {"finished", series->finished}}
                           .dump(2));
  } else {
    fmt::print("report of chain {}: {} step lines, {} attempt(s)\n  {}\n  {}\n", manifest->chain_id,
               series->step_lines, series->attempts, png.string(), svg.string());
  }
  return exit_ok;
}

}  // namespace

Command add_report(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  auto* sub = app.add_subcommand("report", "Draw a chain's loss, learning rate and throughput against steps");
  add_chain_options(*sub, opts->chain);
  sub->add_option("-o,--output", opts->output,
                  "Path of the pictures without extension: writes .png, .svg and the figures as .json "
                  "(default: <run dir>/progress)");
  sub->add_flag("--json", opts->json, "Print where the pictures are and what they show as JSON");
  sub->footer(
      "Reads the train stage's log of the run directory (no Slurm needed) and draws it with Debian's\n"
      "python3-matplotlib (/usr/bin/python3), one line per attempt, restarts marked.\n"
      "Exit codes: 0 drawn, 1 nothing to draw yet or drawing failed, 2 no such chain.\n"
      "Examples:\n"
      "  trnslurm report                          # the newest chain: runs/<chain>/progress.png and .svg\n"
      "  trnslurm report 20261122-005730-123-9f4f3270 -o /tmp/run");
  return {sub, [opts] { return run(*opts); }};
}

}  // namespace trnslurm::cli
