// The trainers' progress lines (docs/progress.md): every line of the input parsed with the formats
// of the bundled records, added to a LogProgress and summarized. Never a crash; oracle: a figure
// that comes out is one the line could hold (a step line has its step and loss; a throughput is
// finite and positive; a learning rate and a step time finite and not negative), and the reading
// state survives its JSON.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_util.hpp"
#include "trnslurm/progress/progress.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& parser = trnslurm::ProgressParser::bundled();
  if (parser.formats() == 0) std::abort();
  trnslurm::LogProgress progress;
  for (const auto line : trnslurm::fuzz::split(trnslurm::fuzz::as_text(data, size), '\n')) {
    const auto parsed = parser.parse(line);
    if (!parsed) continue;
    if (parsed->kind == trnslurm::LineKind::step && (!parsed->step || !parsed->loss)) std::abort();
    if (parsed->seq_per_second && !(std::isfinite(*parsed->seq_per_second) && *parsed->seq_per_second > 0))
      std::abort();
    if (parsed->learning_rate && !(std::isfinite(*parsed->learning_rate) && *parsed->learning_rate >= 0))
      std::abort();
    if (parsed->step_seconds && !(std::isfinite(*parsed->step_seconds) && *parsed->step_seconds >= 0))
      std::abort();
    trnslurm::add_line(progress, *parsed, 1);
  }
  trnslurm::ProgressInputs in;
  in.total_steps = 100;
  in.gbs = 8;
  in.seq_len = 32;
  in.nodes = 2;
  in.running = true;
  in.now = 2;
  const auto summary = trnslurm::summarize(progress, in);
  (void)trnslurm::to_json(summary).dump();
  const auto again =
      trnslurm::log_progress_from_json(nlohmann::json::parse(trnslurm::to_json(progress).dump()));
  if (!again || again->recent.size() != progress.recent.size()) std::abort();
  return 0;
}
