#include "trnslurm/chain/chain_progress.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/chain/restarts.hpp"
#include "trnslurm/chain/run_dir.hpp"
#include "trnslurm/util/file.hpp"
#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view train_stage = "train";
constexpr std::size_t max_state_size = 1 << 20;
}  // namespace

const CheckpointLayout* checkpoint_layout_of(std::string_view name) {
  const auto* it = std::ranges::find_if(checkpoint_layouts, [&](const CheckpointLayout& l) {
    return name.size() > l.prefix.size() && name.starts_with(l.prefix);
  });
  return it == checkpoint_layouts.end() ? nullptr : it;
}

std::optional<CheckpointMark> newest_completed_checkpoint(const fs::path& dir) {
  std::error_code ec;
  std::optional<CheckpointMark> best;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    const auto* layout = checkpoint_layout_of(name);
    if (layout == nullptr) continue;
    const auto step = parse_number<std::uint64_t>(std::string_view(name).substr(layout->prefix.size()));
    if (!step || (best && best->step >= *step)) continue;
    struct stat st {};
    if (::stat((it->path() / layout->marker).c_str(), &st) != 0) continue;  // still being written
    best = CheckpointMark{*step, static_cast<std::int64_t>(st.st_mtim.tv_sec), it->path()};
  }
  return best;
}

Result<RunFigures> read_run_figures(const fs::path& run_dir) {
  const auto path = run_dir / "plan.json";
  const auto text =
      read_file_or_fail(path, max_state_size, "the run's plan", "the run directory is incomplete");
  if (!text) return std::unexpected(text.error());
  try {
    const auto j = nlohmann::json::parse(*text);
    RunFigures f;
    f.total_steps = j.at("total_steps").get<std::uint64_t>();
    f.gbs = j.at("gbs").get<std::uint64_t>();
    f.seq_len = j.at("seq_len").get<std::uint64_t>();
    f.nodes = j.at("nodes").get<std::uint32_t>();
    if (j.contains("world_size") && j.at("world_size").is_number_unsigned())
      f.world_size = j.at("world_size").get<std::uint64_t>();
    if (j.contains("checkpoint_dir") && j.at("checkpoint_dir").is_string())
      f.checkpoint_dir = j.at("checkpoint_dir").get<std::string>();
    if (const auto e = j.find("estimate"); e != j.end() && e->contains("tokens_per_second_per_node"))
      f.estimate_tokens_per_second_per_node = e->at("tokens_per_second_per_node").get<double>();
    return f;
  } catch (const nlohmann::json::exception& e) {
    return fail(fmt::format("not a plan: {}", e.what()), path.string(), "the run directory is incomplete");
  }
}

Result<MeasuredRate> measured_rate(const fs::path& run_dir) {
  auto manifest = read_manifest(run_dir);
  if (!manifest) return std::unexpected(manifest.error());
  auto figures = read_run_figures(run_dir);
  if (!figures) return std::unexpected(figures.error());
  const auto stage = std::ranges::find(manifest->stages, train_stage, &StageRecord::name);
  if (stage == manifest->stages.end() || !stage->job_id)
    return fail("the run has no submitted train stage", run_dir.string(), "pick a run that trained");
  const auto log = output_path(run_dir, stage->name, *stage->job_id);
  LogProgress p;
  auto read = update_progress(p, log, ProgressParser::bundled(), true);
  if (!read) return std::unexpected(read.error());
  ProgressInputs in;
  in.gbs = figures->gbs;
  in.seq_len = figures->seq_len;
  in.nodes = figures->nodes;
  in.world_size = figures->world_size;
  const auto s = summarize(p, in);
  if (!s.tokens_per_second_per_node)
    return fail("no throughput measured: the train log has no progress line with one yet", log.string(),
                "wait for the trainer's first progress lines (trnslurm status shows them)");
  return MeasuredRate{*s.tokens_per_second_per_node, s.step.value_or(0), *figures};
}

fs::path progress_state_path(const fs::path& run_dir) {
  return run_dir / "logs" / ".train-progress.json";
}

Result<std::optional<ProgressSummary>> TrainProgress::refresh(const LoadedChain& chain,
                                                              const ChainStatus& status, std::int64_t now) {
  if (!chain.manifest) return std::nullopt;
  const auto stage = std::ranges::find(status.stages, train_stage, &StageStatus::name);
  if (stage == status.stages.end() || !stage->job_id) return std::nullopt;
  if (stage->phase == JobPhase::pending || stage->phase == JobPhase::unknown) return std::nullopt;
  const auto& run_dir = chain.manifest->run_dir;
  auto figures = read_run_figures(run_dir);
  if (!figures) return std::unexpected(figures.error());
  const auto log = output_path(run_dir, stage->name, *stage->job_id);
  const auto state_file = progress_state_path(run_dir);
  if (!state_) {
    if (const auto text = read_file(state_file, max_state_size)) {
      const auto j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_object() && j.value("log", "") == log.string())
        state_ = log_progress_from_json(j.value("state", nlohmann::json()));
    }
    if (!state_) state_.emplace();
  }
  const bool running = stage->phase == JobPhase::running;
  auto read = update_progress(*state_, log, ProgressParser::bundled(), !running);
  if (!read) return std::unexpected(read.error());
  // Best effort, as the manifest's last states: a read-only run directory still gets its figures.
  (void)write_file_atomic(state_file,
                          nlohmann::json{{"log", log.string()}, {"state", to_json(*state_)}}.dump());

  ProgressInputs in;
  in.total_steps = figures->total_steps;
  in.gbs = figures->gbs;
  in.seq_len = figures->seq_len;
  in.nodes = figures->nodes;
  in.world_size = figures->world_size;
  in.estimate_tokens_per_second_per_node = figures->estimate_tokens_per_second_per_node;
  if (!figures->checkpoint_dir.empty()) {
    if (const auto mark = newest_completed_checkpoint(figures->checkpoint_dir)) {
      in.checkpoint_step = mark->step;
      in.checkpoint_time = mark->time;
    }
  }
  const auto restarts = read_restarts(run_dir);
  in.restarts = static_cast<std::uint32_t>(
      std::ranges::count(restarts, std::string_view("restart"),
                         [](const RestartEvent& e) { return std::string_view(e.event); }));
  in.running = running;
  in.ended = !running;
  in.now = now;
  return summarize(*state_, in);
}

}  // namespace trnslurm
