#include "trnslurm/progress/progress.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {
namespace {

constexpr int cache_version = 1;

template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// JSON has no NaN: a diverged loss is null there, "nan" on the terminal.
nlohmann::json number_or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> mean(std::span<const ProgressPoint> points,
                           std::optional<double> ProgressPoint::*field) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& p : points) {
    if (p.*field) {
      sum += *(p.*field);
      ++n;
    }
  }
  return n > 0 ? std::optional(sum / static_cast<double>(n)) : std::nullopt;
}

// A loss as to_json keeps it: a number, or the text std::to_string gave a non-finite one ("nan",
// "-inf"), read whole. Anything else (text with more after the number, a finite number as text)
// is not what to_json wrote: the cache is refused and the log read again.
std::optional<double> kept_loss(const nlohmann::json& v) {
  if (!v.is_string()) return v.get<double>();
  const auto loss = parse_number<double>(v.get_ref<const std::string&>());
  if (!loss || std::isfinite(*loss)) return std::nullopt;
  return loss;
}

}  // namespace

void add_line(LogProgress& p, const ProgressLine& line, std::int64_t seen_at) {
  if (line.epoch) p.epoch = line.epoch;
  switch (line.kind) {
    case LineKind::step: {
      if (!line.step || !line.loss) return;
      if (!p.recent.empty() && *line.step < p.recent.back().step) {
        ++p.steps_back;  // a restart went back to its checkpoint: a new attempt
        p.recent.clear();
      }
      if (!p.recent.empty() && *line.step == p.recent.back().step) p.recent.pop_back();
      p.recent.push_back({*line.step, *line.loss, line.learning_rate, line.seq_per_second,
                          line.tokens_per_second_per_device});
      if (p.recent.size() > LogProgress::kept) p.recent.erase(p.recent.begin());
      ++p.step_lines;
      p.finished = false;
      p.last_step_seen = seen_at;
      return;
    }
    case LineKind::finished:
      p.finished = true;
      return;
    case LineKind::epoch_begin:
    case LineKind::epoch_end:
      return;
  }
}

Result<LogRead> update_progress(LogProgress& p, const std::filesystem::path& log,
                                const ProgressParser& parser, bool final, std::uint64_t tail_bytes) {
  struct stat st {};
  if (::stat(log.c_str(), &st) == 0) {
    const auto id = static_cast<std::uint64_t>(st.st_ino);
    if ((p.file_id != 0 && p.file_id != id) || static_cast<std::uint64_t>(st.st_size) < p.offset) p = {};
    if (p.file_id == 0 && p.offset == 0) {
      // Never read: the smallest tail that holds a step line, so a first look costs what it shows.
      for (std::uint64_t window = std::min<std::uint64_t>(64 << 10, tail_bytes);; window *= 4) {
        window = std::min(window, tail_bytes);
        auto start = tail_start(log, window);
        if (!start) return std::unexpected(start.error());
        LogProgress tried;
        tried.file_id = id;
        tried.offset = *start;
        tried.from_tail = *start > 0;
        auto read = update_progress(tried, log, parser, final, tail_bytes);
        if (!read) return read;
        if (tried.step_lines > 0 || *start == 0 || window >= tail_bytes) {
          p = std::move(tried);
          return read;
        }
      }
    }
    p.file_id = id;
  }
  const auto before = p.step_lines;
  auto read = read_lines(
      log, p.offset,
      [&](std::string_view text) {
        if (auto line = parser.parse(text)) add_line(p, *line, 0);
      },
      LogReadLimits{.final = final});
  if (!read) return read;
  p.offset = read->offset;
  p.long_lines += read->long_lines;
  // The newest step line was written by the time of the log's last change.
  if (p.step_lines != before) p.last_step_seen = read->modified;
  return read;
}

nlohmann::json to_json(const LogProgress& p) {
  auto recent = nlohmann::json::array();
  for (const auto& r : p.recent)
    recent.push_back(
        {r.step, std::isfinite(r.loss) ? nlohmann::json(r.loss) : nlohmann::json(std::to_string(r.loss)),
         or_null(r.learning_rate), or_null(r.seq_per_second), or_null(r.tokens_per_second_per_device)});
  return {{"version", cache_version},           {"offset", p.offset},        {"file_id", p.file_id},
          {"from_tail", p.from_tail},           {"recent", recent},          {"step_lines", p.step_lines},
          {"steps_back", p.steps_back},         {"epoch", or_null(p.epoch)}, {"finished", p.finished},
          {"last_step_seen", p.last_step_seen}, {"long_lines", p.long_lines}};
}

std::optional<LogProgress> log_progress_from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object() || j.at("version") != cache_version) return std::nullopt;
    LogProgress p;
    p.offset = j.at("offset").get<std::uint64_t>();
    p.file_id = j.at("file_id").get<std::uint64_t>();
    p.from_tail = j.at("from_tail").get<bool>();
    p.step_lines = j.at("step_lines").get<std::uint64_t>();
    p.steps_back = j.at("steps_back").get<std::uint32_t>();
    if (!j.at("epoch").is_null()) p.epoch = j.at("epoch").get<std::uint64_t>();
    p.finished = j.at("finished").get<bool>();
    p.last_step_seen = j.at("last_step_seen").get<std::int64_t>();
    p.long_lines = j.at("long_lines").get<std::uint64_t>();
    for (const auto& r : j.at("recent")) {
      ProgressPoint point;
      point.step = r.at(0).get<std::uint64_t>();
      const auto loss = kept_loss(r.at(1));
      if (!loss) return std::nullopt;
      point.loss = *loss;
      if (!r.at(2).is_null()) point.learning_rate = r.at(2).get<double>();
      if (!r.at(3).is_null()) point.seq_per_second = r.at(3).get<double>();
      if (r.size() > 4 && !r.at(4).is_null()) point.tokens_per_second_per_device = r.at(4).get<double>();
      p.recent.push_back(point);
    }
    if (p.recent.size() > LogProgress::kept) return std::nullopt;
    return p;
  } catch (const std::exception&) {  // nlohmann's type and range errors
    return std::nullopt;
  }
}

std::string_view to_string(LossTrend trend) {
  switch (trend) {
    case LossTrend::falling:
      return "falling";
    case LossTrend::flat:
      return "flat";
    case LossTrend::rising:
      return "rising";
    case LossTrend::unknown:
      break;
  }
  return "unknown";
}

ProgressSummary summarize(const LogProgress& p, const ProgressInputs& in) {
  ProgressSummary s;
  s.total_steps = in.total_steps;
  s.restarts = in.restarts;
  s.epoch = p.epoch;
  s.finished = p.finished;
  s.ended = in.ended;
  s.checkpoint_step = in.checkpoint_step;
  if (in.checkpoint_time) s.checkpoint_age_seconds = std::max<std::int64_t>(0, in.now - *in.checkpoint_time);
  if (in.estimate_tokens_per_second_per_node && *in.estimate_tokens_per_second_per_node > 0)
    s.estimate_tokens_per_second_per_node = in.estimate_tokens_per_second_per_node;
  if (p.recent.empty()) return s;
  const auto& last = p.recent.back();
  s.step = last.step;
  // tp_zero1 prints no end line: a stage that ended at the planned total finished too.
  if (in.ended && in.total_steps > 0 && last.step >= in.total_steps) s.finished = true;
  if (in.total_steps > 0)
    s.percent = 100.0 * static_cast<double>(last.step) / static_cast<double>(in.total_steps);
  s.loss = last.loss;
  s.learning_rate = last.learning_rate;

  if (p.recent.size() >= 4) {
    const std::span<const ProgressPoint> all(p.recent);
    const auto half = all.size() / 2;
    const auto avg = [](std::span<const ProgressPoint> v) {
      return std::accumulate(v.begin(), v.end(), 0.0,
                             [](double a, const ProgressPoint& x) { return a + x.loss; }) /
             static_cast<double>(v.size());
    };
    const double older = avg(all.first(half));
    const double newer = avg(all.last(all.size() - half));
    if (std::isfinite(older) && std::isfinite(newer) && older != 0) {
      s.loss_change = (newer - older) / std::fabs(older);
      s.loss_trend = *s.loss_change < -0.01  ? LossTrend::falling
                     : *s.loss_change > 0.01 ? LossTrend::rising
                                             : LossTrend::flat;
    }
  }

  // The trainer's throughput is already a moving average; the last few smooth it further.
  const auto newest =
      std::span<const ProgressPoint>(p.recent).last(std::min<std::size_t>(8, p.recent.size()));
  const auto seq_per_second = mean(newest, &ProgressPoint::seq_per_second);
  const auto per_device = mean(newest, &ProgressPoint::tokens_per_second_per_device);
  if (seq_per_second && *seq_per_second > 0) {
    if (in.seq_len > 0) s.tokens_per_second = *seq_per_second * static_cast<double>(in.seq_len);
    if (in.gbs > 0) s.seconds_per_step = static_cast<double>(in.gbs) / *seq_per_second;
  } else if (per_device && *per_device > 0 && in.world_size > 0) {
    // TorchTitan prints one device's rate: the job's is that x the world size.
    s.tokens_per_second = *per_device * static_cast<double>(in.world_size);
    if (in.gbs > 0 && in.seq_len > 0)
      s.seconds_per_step = static_cast<double>(in.gbs * in.seq_len) / *s.tokens_per_second;
  }
  if (s.tokens_per_second && in.nodes > 0) s.tokens_per_second_per_node = *s.tokens_per_second / in.nodes;
  if (s.tokens_per_second_per_node && s.estimate_tokens_per_second_per_node)
    s.measured_vs_estimate = *s.tokens_per_second_per_node / *s.estimate_tokens_per_second_per_node;
  if (!p.finished && !in.ended && s.seconds_per_step && last.step < in.total_steps)
    s.eta_seconds = std::llround(static_cast<double>(in.total_steps - last.step) * *s.seconds_per_step);

  if (in.running && p.last_step_seen > 0) {
    s.seconds_since_step = std::max<std::int64_t>(0, in.now - p.last_step_seen);
    if (s.seconds_per_step) {
      // The usual gap between two step lines: the logging interval in steps, times a step's time.
      const std::uint64_t interval =
          p.recent.size() >= 2 ? std::max<std::uint64_t>(1, last.step - p.recent[p.recent.size() - 2].step)
                               : 1;
      const double gap = *s.seconds_per_step * static_cast<double>(interval);
      s.stalled = static_cast<double>(*s.seconds_since_step) >
                  std::max(in.stall_floor_seconds, in.stall_factor * gap);
    }
  }
  return s;
}

Result<ProgressSeries> read_series(const std::filesystem::path& log, const ProgressParser& parser,
                                   std::size_t max_points) {
  ProgressSeries out;
  std::uint64_t stride = 1;
  std::optional<std::uint64_t> previous;
  const auto read = read_lines(
      log, 0,
      [&](std::string_view text) {
        const auto line = parser.parse(text);
        if (!line) return;
        if (line->kind == LineKind::finished) out.finished = true;
        if (line->kind != LineKind::step || !line->step || !line->loss) return;
        out.finished = false;
        if (!previous || *line->step < *previous) ++out.attempts;
        previous = line->step;
        const auto index = out.step_lines++;
        // A new attempt's first line is always kept: the restart shows where it happened.
        const bool first_of_attempt = out.points.empty() || out.points.back().attempt != out.attempts - 1;
        if (index % stride != 0 && !first_of_attempt) return;
        out.points.push_back({out.attempts - 1,
                              {*line->step, *line->loss, line->learning_rate, line->seq_per_second,
                               line->tokens_per_second_per_device}});
        if (out.points.size() > std::max<std::size_t>(max_points, 2)) {
          std::vector<SeriesPoint> kept;
          kept.reserve(out.points.size() / 2 + 1);
          for (std::size_t i = 0; i < out.points.size(); ++i)
            if (i % 2 == 0 || (i > 0 && out.points[i].attempt != out.points[i - 1].attempt))
              kept.push_back(out.points[i]);
          out.points = std::move(kept);
          stride *= 2;
        }
      },
      LogReadLimits{.final = true});
  if (!read) return std::unexpected(read.error());
  out.long_lines = read->long_lines;
  return out;
}

std::optional<double> job_tokens_per_second(const ProgressPoint& p, std::uint64_t seq_len,
                                            std::uint64_t world_size) {
  if (p.seq_per_second && seq_len > 0) return *p.seq_per_second * static_cast<double>(seq_len);
  if (p.tokens_per_second_per_device && world_size > 0)
    return *p.tokens_per_second_per_device * static_cast<double>(world_size);
  return std::nullopt;
}

nlohmann::json to_json(const ProgressSummary& s) {
  return {{"step", or_null(s.step)},
          {"total_steps", s.total_steps},
          {"percent", number_or_null(s.percent)},
          {"epoch", or_null(s.epoch)},
          {"loss", number_or_null(s.loss)},
          {"loss_trend", to_string(s.loss_trend)},
          {"loss_change", number_or_null(s.loss_change)},
          {"learning_rate", number_or_null(s.learning_rate)},
          {"tokens_per_second", number_or_null(s.tokens_per_second)},
          {"tokens_per_second_per_node", number_or_null(s.tokens_per_second_per_node)},
          {"seconds_per_step", number_or_null(s.seconds_per_step)},
          {"estimate_tokens_per_second_per_node", number_or_null(s.estimate_tokens_per_second_per_node)},
          {"measured_vs_estimate", number_or_null(s.measured_vs_estimate)},
          {"eta_seconds", or_null(s.eta_seconds)},
          {"checkpoint_step", or_null(s.checkpoint_step)},
          {"checkpoint_age_seconds", or_null(s.checkpoint_age_seconds)},
          {"restarts", s.restarts},
          {"stalled", s.stalled},
          {"seconds_since_step", or_null(s.seconds_since_step)},
          {"finished", s.finished},
          {"ended", s.ended}};
}

}  // namespace trnslurm
