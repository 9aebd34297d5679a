#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "../fixtures.hpp"
#include "trnslurm/progress/progress.hpp"

using namespace trnslurm;

namespace {
void append(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::app);
  out << text;
}

// run_llama_nxd's line for the step-th optimizer step (it prints step - 1).
std::string pp_line(std::uint64_t step, double loss, double seq_per_second = 16) {
  return fmt::format("step {} step_time 0.5s throughput {} seq/s step loss {} grad norm 1.0\n", step - 1,
                     seq_per_second, loss);
}

ProgressLine step_line(std::uint64_t step, double loss, double seq_per_second = 16) {
  ProgressLine l;
  l.step = step;
  l.loss = loss;
  l.seq_per_second = seq_per_second;
  return l;
}

ProgressInputs inputs() {
  ProgressInputs in;
  in.total_steps = 100;
  in.gbs = 8;
  in.seq_len = 32;
  in.nodes = 2;
  in.running = true;
  in.now = 1000;
  return in;
}
}  // namespace

TEST_CASE("progress: step, percent, throughput per node, ETA from the measured rate") {
  LogProgress p;
  for (std::uint64_t s = 1; s <= 10; ++s) add_line(p, step_line(s, 10.0 - static_cast<double>(s) * 0.5), 990);
  auto in = inputs();
  in.estimate_tokens_per_second_per_node = 512;
  const auto s = summarize(p, in);
  CHECK(s.step == 10u);
  CHECK(*s.percent == Approx(10.0));
  CHECK(*s.loss == Approx(5.0));
  CHECK(s.loss_trend == LossTrend::falling);
  CHECK(*s.tokens_per_second == Approx(16.0 * 32));
  CHECK(*s.tokens_per_second_per_node == Approx(16.0 * 32 / 2));
  CHECK(*s.seconds_per_step == Approx(0.5));  // 8 sequences a step at 16 a second
  CHECK(s.eta_seconds == 45);                 // 90 steps left
  CHECK(*s.measured_vs_estimate == Approx(0.5));
  CHECK(s.seconds_since_step == 10);
  CHECK_FALSE(s.stalled);
}

TEST_CASE("progress: a trend needs a few lines, and says rising and flat too") {
  LogProgress p;
  add_line(p, step_line(1, 3), 1);
  add_line(p, step_line(2, 2), 1);
  CHECK(summarize(p, inputs()).loss_trend == LossTrend::unknown);
  LogProgress up;
  for (std::uint64_t s = 1; s <= 6; ++s) add_line(up, step_line(s, static_cast<double>(s)), 1);
  CHECK(summarize(up, inputs()).loss_trend == LossTrend::rising);
  LogProgress flat;
  for (std::uint64_t s = 1; s <= 6; ++s) add_line(flat, step_line(s, 2.0), 1);
  CHECK(summarize(flat, inputs()).loss_trend == LossTrend::flat);
  LogProgress diverged;
  for (std::uint64_t s = 1; s <= 6; ++s) add_line(diverged, step_line(s, s > 4 ? NAN : 2.0), 1);
  const auto d = summarize(diverged, inputs());
  CHECK(d.loss_trend == LossTrend::unknown);
  CHECK(std::isnan(*d.loss));
  CHECK(to_json(d)["loss"].is_null());
}

TEST_CASE("progress: a stalled trainer is flagged after N usual gaps, never before its first step") {
  LogProgress p;
  auto in = inputs();
  in.stall_factor = 10;
  in.stall_floor_seconds = 0;
  CHECK_FALSE(summarize(p, in).stalled);  // compiling: no step yet
  add_line(p, step_line(10, 2), 1000);
  add_line(p, step_line(20, 2), 1000);  // a line every 10 steps of 0.5 s: a 5 s gap
  in.now = 1049;
  CHECK_FALSE(summarize(p, in).stalled);
  in.now = 1051;
  CHECK(summarize(p, in).stalled);
  in.stall_floor_seconds = 300;  // a checkpoint save is no stall
  CHECK_FALSE(summarize(p, in).stalled);
  in.running = false;
  in.stall_floor_seconds = 0;
  CHECK_FALSE(summarize(p, in).stalled);
}

TEST_CASE("progress: a restart that goes back to its checkpoint starts a new attempt") {
  LogProgress p;
  for (std::uint64_t s = 1; s <= 8; ++s) add_line(p, step_line(s, 5), 1);
  add_line(p, step_line(6, 4), 2);
  CHECK(p.steps_back == 1);
  CHECK(p.recent.size() == 1);
  CHECK(summarize(p, inputs()).step == 6u);
  add_line(p, step_line(6, 3.5), 3);  // the same step again: replaced, not doubled
  CHECK(p.recent.size() == 1);
  CHECK(p.recent.back().loss == 3.5);
}

TEST_CASE("progress: finished, and the final figures of an ended chain") {
  LogProgress p;
  for (std::uint64_t s = 1; s <= 100; ++s) add_line(p, step_line(s, 1), 1);
  ProgressLine done;
  done.kind = LineKind::finished;
  add_line(p, done, 2);
  auto in = inputs();
  in.running = false;
  in.ended = true;
  in.checkpoint_step = 100;
  in.checkpoint_time = 900;
  in.restarts = 1;
  const auto s = summarize(p, in);
  CHECK(s.finished);
  CHECK(s.step == 100u);
  CHECK(*s.percent == Approx(100.0));
  CHECK_FALSE(s.eta_seconds);
  CHECK_FALSE(s.seconds_since_step);
  CHECK(s.checkpoint_age_seconds == 100);
  CHECK(s.restarts == 1);
  CHECK(p.recent.size() == LogProgress::kept);
  const auto j = to_json(s);
  CHECK(j["step"] == 100);
  CHECK(j["finished"] == true);
  CHECK(j["eta_seconds"].is_null());
}

TEST_CASE("progress: a log read a little more on each refresh, kept as JSON between commands") {
  test::ScratchDir dir;
  const auto log = dir / "train-7.out";
  const auto& parser = ProgressParser::bundled();
  append(log, "Epoch 0\n" + pp_line(1, 5.0) + pp_line(2, 4.5) + "step 2 step_time 0.5s throu");
  LogProgress p;
  REQUIRE(update_progress(p, log, parser, false).has_value());
  CHECK(p.step_lines == 2);
  CHECK(p.recent.back().step == 2u);
  CHECK(p.epoch == 0u);
  CHECK_FALSE(p.from_tail);
  auto again = log_progress_from_json(nlohmann::json::parse(to_json(p).dump()));
  REQUIRE(again);
  append(log, "ghput 16 seq/s step loss 4.0 grad norm 1.0\nTraining finished successfully\n");
  REQUIRE(update_progress(*again, log, parser, false).has_value());
  CHECK(again->step_lines == 3);  // the half line, completed, read once
  CHECK(again->recent.back().step == 3u);
  CHECK(again->recent.back().loss == 4.0);
  CHECK(again->finished);
  CHECK(again->last_step_seen > 0);
  CHECK_FALSE(log_progress_from_json(nlohmann::json::parse(R"({"version": 99})")));
  CHECK_FALSE(log_progress_from_json(nlohmann::json::parse(R"([1, 2])")));
  auto torn = to_json(p);
  torn["recent"] = "x";
  CHECK_FALSE(log_progress_from_json(torn));
}

TEST_CASE("progress: a non-finite loss kept as text comes back, other text in its place is refused") {
  LogProgress p;
  ProgressPoint nan_point;
  nan_point.step = 1;
  nan_point.loss = std::nan("");
  ProgressPoint inf_point;
  inf_point.step = 2;
  inf_point.loss = -std::numeric_limits<double>::infinity();
  p.recent = {nan_point, inf_point};
  const auto kept = to_json(p);
  REQUIRE(kept["recent"][0][1].is_string());
  const auto back = log_progress_from_json(nlohmann::json::parse(kept.dump()));
  REQUIRE(back);
  CHECK(std::isnan(back->recent[0].loss));
  CHECK(std::isinf(back->recent[1].loss));
  CHECK(back->recent[1].loss < 0);
  // std::stod took these (its prefix, leading blanks); to_json never writes them.
  for (const char* text : {"1.5abc", " nan", "nanx", "4.0", "", "0x1p3"}) {
    auto edited = kept;
    edited["recent"][0][1] = text;
    CHECK_FALSE(log_progress_from_json(edited));
  }
}

TEST_CASE("progress: a log never read is read from its tail only - a replaced one starts over") {
  test::ScratchDir dir;
  const auto log = dir / "train-7.out";
  const auto& parser = ProgressParser::bundled();
  std::string text;
  for (std::uint64_t s = 1; s <= 1000; ++s) text += pp_line(s, 2.0);
  append(log, text);
  LogProgress p;
  REQUIRE(update_progress(p, log, parser, false, 1000).has_value());
  CHECK(p.from_tail);
  CHECK(p.step_lines < 30);  // ~1000 bytes of ~65-byte lines
  CHECK(p.recent.back().step == 1000u);
  // Another file at the same path (a new job's log written over it): read from its own start.
  std::filesystem::remove(log);
  append(log, pp_line(1, 9.0));
  REQUIRE(update_progress(p, log, parser, false, 1000).has_value());
  CHECK(p.recent.size() == 1);
  CHECK(p.recent.back().loss == 9.0);
  CHECK(p.steps_back == 0);
}

TEST_CASE("progress: the whole series for a picture, attempts split where the step goes back") {
  test::ScratchDir dir;
  const auto log = dir / "train-7.out";
  std::string text;
  for (std::uint64_t s = 1; s <= 10; ++s) text += pp_line(s, 5.0);
  for (std::uint64_t s = 6; s <= 12; ++s) text += pp_line(s, 4.0);  // resumed from step 5
  text += "Training finished successfully\n";
  append(log, text);
  auto series = read_series(log, ProgressParser::bundled());
  REQUIRE(series.has_value());
  CHECK(series->step_lines == 17);
  CHECK(series->attempts == 2);
  CHECK(series->finished);
  REQUIRE(series->points.size() == 17);
  CHECK(series->points[10].attempt == 1);
  CHECK(series->points[10].point.step == 6u);
  // Bounded: past max_points every other one goes, the first line of each attempt stays.
  auto thin = read_series(log, ProgressParser::bundled(), 4);
  REQUIRE(thin.has_value());
  CHECK(thin->points.size() <= 6);
  CHECK(thin->step_lines == 17);
  CHECK(std::ranges::count_if(thin->points,
                              [](const SeriesPoint& p) { return p.attempt == 1 && p.point.step == 6; }) == 1);
  auto none = read_series(dir / "missing.out", ProgressParser::bundled());
  REQUIRE(none.has_value());
  CHECK(none->attempts == 0);
  CHECK(none->points.empty());
}

TEST_CASE("progress: a trainer without an end line finished when its stage ended at the total") {
  LogProgress p;
  for (std::uint64_t s = 99; s <= 100; ++s) add_line(p, step_line(s, 1), 1);
  auto in = inputs();
  CHECK_FALSE(summarize(p, in).finished);  // running
  in.running = false;
  in.ended = true;
  CHECK(summarize(p, in).finished);
  CHECK(summarize(p, in).ended);
  LogProgress short_of;
  add_line(short_of, step_line(50, 1), 1);
  CHECK_FALSE(summarize(short_of, in).finished);
  CHECK(summarize(short_of, in).ended);
  CHECK_FALSE(summarize(short_of, in).eta_seconds);
}

TEST_CASE("progress: a log never read is read from its end until a step line turns up") {
  test::ScratchDir dir;
  const auto log = dir / "train-7.out";
  const std::string other = "INFO ||NCC_WRAPPER||: a line of something else entirely, not progress\n";
  std::string text;
  for (int i = 0; i < 30000; ++i) text += other;  // ~2 MiB before
  for (std::uint64_t s = 1; s <= 50; ++s) text += pp_line(s, 3.0);
  for (int i = 0; i < 4000; ++i) text += other;  // ~300 KiB after the last step line
  append(log, text);
  LogProgress p;
  REQUIRE(update_progress(p, log, ProgressParser::bundled(), false).has_value());
  CHECK(p.from_tail);
  REQUIRE_FALSE(p.recent.empty());
  CHECK(p.recent.back().step == 50u);
  CHECK(p.offset == std::filesystem::file_size(log));
  LogProgress capped;  // no further than tail_bytes: no step line within it
  REQUIRE(update_progress(capped, log, ProgressParser::bundled(), false, 100 << 10).has_value());
  CHECK(capped.recent.empty());
  CHECK(capped.offset == std::filesystem::file_size(log));
}

TEST_CASE("progress: TorchTitan's tps is one device's: the job's rate is tps x the world size") {
  LogProgress p;
  for (std::uint64_t s = 1; s <= 4; ++s) {
    ProgressLine l;
    l.step = s;
    l.loss = 5.0;
    l.tokens_per_second_per_device = 64;  // 2 nodes x 2 devices: 256 tokens/s in all
    add_line(p, l, 990);
  }
  auto in = inputs();
  in.world_size = 4;
  const auto s = summarize(p, in);
  CHECK(*s.tokens_per_second == Approx(256));
  CHECK(*s.tokens_per_second_per_node == Approx(128));
  CHECK(*s.seconds_per_step == Approx(1.0));  // 8 x 32 tokens a step at 256 a second
  CHECK(s.eta_seconds == 96);
  // Kept between commands with the rest.
  const auto back = log_progress_from_json(to_json(p));
  REQUIRE(back);
  CHECK(*back->recent.back().tokens_per_second_per_device == Approx(64));
  // Without the world size there is no job rate to give.
  in.world_size = 0;
  CHECK_FALSE(summarize(p, in).tokens_per_second);
  CHECK(job_tokens_per_second(p.recent.back(), 32, 4) == Approx(256));
  CHECK_FALSE(job_tokens_per_second(p.recent.back(), 32, 0));
}
