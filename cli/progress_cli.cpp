#include "progress_cli.hpp"

#include <fmt/format.h>

#include <cmath>

#include "colour.hpp"
#include "trnslurm/plan/plan.hpp"

namespace trnslurm::cli {

namespace {

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : fmt::format("{}", v);  // nan, inf as printed
}

}  // namespace

std::string format_progress(const ProgressSummary& s, bool colour) {
  const bool final = s.finished || !s.eta_seconds;
  std::string out = fmt::format("  train {}: ", s.finished ? "final" : s.ended ? "stopped" : "progress");
  if (!s.step) {
    out += "no progress line yet";
  } else {
    out += fmt::format("step {}/{}", *s.step, s.total_steps);
    if (s.percent) out += fmt::format(" ({:.1f} %)", *s.percent);
    if (s.epoch) out += fmt::format(", epoch {}", *s.epoch);
    if (s.loss) {
      out += fmt::format(", loss {}", number(*s.loss));
      if (s.loss_change) out += fmt::format(" ({} {:+.1f} %)", to_string(s.loss_trend), *s.loss_change * 100);
    }
    if (s.learning_rate) out += fmt::format(", lr {:.2e}", *s.learning_rate);
  }
  out += "\n";
  std::string rate;
  if (s.tokens_per_second) {
    rate = fmt::format("{:.4g} tokens/s", *s.tokens_per_second);
    if (s.tokens_per_second_per_node) rate += fmt::format(" ({:.4g} per node", *s.tokens_per_second_per_node);
    if (s.measured_vs_estimate)
      rate += fmt::format("; {:.2f}x the recipe's estimate of {:.4g}", *s.measured_vs_estimate,
                          *s.estimate_tokens_per_second_per_node);
    if (s.tokens_per_second_per_node) rate += ")";
    if (s.seconds_per_step) rate += fmt::format(", {} a step", format_seconds(*s.seconds_per_step));
  }
  if (s.eta_seconds)
    rate += fmt::format("{}ETA {}", rate.empty() ? "" : ", ",
                        format_seconds(static_cast<double>(*s.eta_seconds)));
  if (!rate.empty()) out += fmt::format("    {}\n", rate);
  std::string marks;
  if (s.checkpoint_step) {
    marks = fmt::format("last checkpoint step {}", *s.checkpoint_step);
    if (s.checkpoint_age_seconds && !final)
      marks += fmt::format(", {} ago", format_seconds(static_cast<double>(*s.checkpoint_age_seconds)));
  } else {
    marks = "no checkpoint yet";
  }
  marks += fmt::format("; restarts {}", s.restarts);
  out += fmt::format("    {}\n", marks);
  if (s.stalled && s.seconds_since_step) {
    out += "    " +
           paint(fmt::format("STALLED: no new step for {}",
                             format_seconds(static_cast<double>(*s.seconds_since_step))),
                 Colour::red, colour) +
           fmt::format(" (a step takes {}; see trnslurm logs --stage train)\n",
                       s.seconds_per_step ? format_seconds(*s.seconds_per_step) : std::string("?"));
  }
  return out;
}

nlohmann::json progress_json(const std::optional<ProgressSummary>& s) {
  return s ? to_json(*s) : nlohmann::json(nullptr);
}

}  // namespace trnslurm::cli
