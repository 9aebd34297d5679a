#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>

#include "../fixtures.hpp"
#include "trnslurm/progress/progress_line.hpp"

using namespace trnslurm;

namespace {
const ProgressParser& parser() {
  const auto& p = ProgressParser::bundled();
  REQUIRE(p.formats() > 0);
  return p;
}
}  // namespace

TEST_CASE("progress line: the bundled records compile, each step line with step, loss and throughput") {
  for (const auto& record : upstream::bundled_interfaces()) {
    for (const auto& format : record.log_formats) {
      INFO(record.source << " " << format.key);
      const bool read = format.label.empty() || format.label == "step" || format.label == "epoch_begin" ||
                        format.label == "epoch_end" || format.label == "finished";
      if (!read) continue;
      // TorchTitan's record says nothing of when its step counter moves: from() supplies it.
      if (format.call) REQUIRE(LineFormat::compile(format).has_value());
      if (!format.label.empty() && format.label != "step") continue;
      bool step = false, loss = false, throughput = false;
      for (const auto& piece : format.pieces) {
        if (!piece.field) continue;
        step |= field_role(*piece.field) == FieldRole::step;
        loss |= field_role(*piece.field) == FieldRole::loss;
        throughput |= field_role(*piece.field) == FieldRole::seq_per_second ||
                      field_role(*piece.field) == FieldRole::tokens_per_second_per_device;
      }
      CHECK(step);
      CHECK(loss);
      CHECK(throughput);
    }
  }
  // 2.28 and 2.29 print the same lines: one format each; TorchTitan's step line one more.
  CHECK(parser().formats() == 7);
}

TEST_CASE("progress line: tp_zero1's LOG line counts the step it follows") {
  const auto line = parser().parse(
      "LOG Tue Nov 24 13:43:34 2026 - (1, 120) step_loss : 2.3456 learning_rate : 3.00e-03 throughput : "
      "123.45 seq/s ");
  REQUIRE(line);
  CHECK(line->kind == LineKind::step);
  CHECK(line->step == 120u);  // counted before the call: the 120th step
  CHECK(line->epoch == 1u);
  CHECK(*line->loss == Approx(2.3456));
  CHECK(*line->learning_rate == Approx(3e-3));
  CHECK(*line->seq_per_second == Approx(123.45));
  CHECK_FALSE(line->step_seconds);
  // With --print_grad_norm, and with the trailing blank trimmed away.
  auto norm = parser().parse(
      "LOG Tue Nov 24 13:43:34 2026 - (0, 7) step_loss : 9.0000 learning_rate : 1.00e-04 throughput : 1.00 "
      "seq/s "
      "grad-norm : 1.5");
  REQUIRE(norm);
  CHECK(norm->step == 7u);
  auto trimmed = parser().parse(
      "LOG Tue Nov 24 13:43:34 2026 - (0, 7) step_loss : 9.0000 learning_rate : 1.00e-04 throughput : 1.00 "
      "seq/s");
  REQUIRE(trimmed);
  CHECK(*trimmed->seq_per_second == Approx(1.0));
}

TEST_CASE("progress line: run_llama_nxd logs before counting, so 'step 9' follows the tenth step") {
  const auto line =
      parser().parse("step 9 step_time 0.5123s throughput 64.5 seq/s step loss 3.25 grad norm 1.0625");
  REQUIRE(line);
  CHECK(line->step == 10u);
  CHECK(*line->loss == Approx(3.25));
  CHECK(*line->seq_per_second == Approx(64.5));
  CHECK(*line->step_seconds == Approx(0.5123));
  CHECK_FALSE(line->learning_rate);
  REQUIRE(parser().parse("step 0 step_time 1e-05s throughput 2.5e+03 seq/s step loss 5.5 grad norm None"));
  CHECK(
      parser().parse("step 0 step_time 1e-05s throughput 2.5e+03 seq/s step loss 5.5 grad norm None")->step ==
      1u);
}

TEST_CASE("progress line: epoch and end lines") {
  const auto begin = parser().parse("Epoch 2 begin Tue Nov 24 13:43:34 2026");
  REQUIRE(begin);
  CHECK(begin->kind == LineKind::epoch_begin);
  CHECK(begin->epoch == 2u);
  const auto pp_begin = parser().parse("Epoch 3");
  REQUIRE(pp_begin);
  CHECK(pp_begin->kind == LineKind::epoch_begin);
  CHECK(pp_begin->epoch == 3u);
  const auto end = parser().parse(
      "Epoch 0 step 7 end Tue Nov 24 13:43:34 2026 loss 2.5 perf 12.5 seq/sec (at train microstep 28 time "
      "1764000000.5 from beginning time 1763999990.25)");
  REQUIRE(end);
  CHECK(end->kind == LineKind::epoch_end);
  CHECK(end->step == 7u);  // printed after the loop: as is
  const auto done = parser().parse("Training finished successfully");
  REQUIRE(done);
  CHECK(done->kind == LineKind::finished);
}

TEST_CASE("progress line: what is not a progress line is no figure") {
  for (const std::string& bad : {
           std::string(),
           std::string("step"),
           std::string("Epoch"),
           std::string("Epoch x"),
           std::string("Epoch -1"),
           std::string("Epoch 1 2"),
           std::string("Training finished successfully!"),
           std::string("skipping batch 3"),
           // truncated at every length
           std::string("step 9 step_time 0.5123s throughput 64.5 seq/s step loss 3.2"),
           std::string("LOG Tue Nov 24 13:43:34 2026 - (1, 120) step_loss : 2.3456 learning_rate : 3.00e-03 "
                       "throughput : 12"),
           // numbers that are not numbers, or not such figures
           std::string("step -1 step_time 0.5s throughput 64.5 seq/s step loss 3.25 grad norm 1"),
           std::string("step 1.5 step_time 0.5s throughput 64.5 seq/s step loss 3.25 grad norm 1"),
           std::string("step 99999999999999999999999 step_time 0.5s throughput 64.5 seq/s step loss 3.25 "
                       "grad norm 1"),
           std::string("step 1 step_time 0.5s throughput -64.5 seq/s step loss 3.25 grad norm 1"),
           std::string("step 1 step_time 0.5s throughput 0 seq/s step loss 3.25 grad norm 1"),
           std::string("step 1 step_time 0.5s throughput inf seq/s step loss 3.25 grad norm 1"),
           std::string("step 1 step_time 0.5s throughput nan seq/s step loss 3.25 grad norm 1"),
           std::string("step 1 step_time -0.5s throughput 1 seq/s step loss 3.25 grad norm 1"),
           std::string("step 1 step_time 0.5s throughput 1 seq/s step loss tensor(3.25) grad norm 1"),
           std::string("step 1 step_time 0.5s throughput  1 seq/s step loss 3.25 grad norm 1"),
           std::string("LOG x - (0, 1) step_loss : 2.0 learning_rate : -1.00e-03 throughput : 1.00 seq/s "),
           std::string("LOG x - (0, +1) step_loss : 2.0 learning_rate : 1.00e-03 throughput : 1.00 seq/s "),
           std::string("  LOG x - (0, 1) step_loss : 2.0 learning_rate : 1.00e-03 throughput : 1.00 seq/s "),
           std::string("[default0]:step 1 step_time 0.5s throughput 1 seq/s step loss 3.25 grad norm 1"),
       }) {
    INFO(bad);
    CHECK_FALSE(parser().parse(bad).has_value());
  }
}

TEST_CASE("progress line: a line cut after its last figure still reads right") {
  const auto cut = parser().parse("step 9 step_time 0.5123s throughput 64.5 seq/s step loss 3.25 grad norm");
  REQUIRE(cut);
  CHECK(*cut->loss == Approx(3.25));
}

TEST_CASE("progress line: a diverged loss is read as printed") {
  const auto line = parser().parse("step 4 step_time 0.5s throughput 8 seq/s step loss nan grad norm nan");
  REQUIRE(line);
  CHECK(std::isnan(*line->loss));
}

TEST_CASE("progress line: binary and huge lines never crash and never match") {
  std::string binary(4096, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>((i * 131 + 7) % 256);
  CHECK_FALSE(parser().parse(binary).has_value());
  std::string nul_inside = "step 1 step_time 0.5s throughput 1 seq/s step loss 3.25 grad norm 1";
  nul_inside[5] = '\0';
  CHECK_FALSE(parser().parse(nul_inside).has_value());
  const std::string huge =
      "step 1 step_time " + std::string(1 << 20, '9') + "s throughput 1 seq/s step loss 3 grad norm 1";
  CHECK_FALSE(parser().parse(huge).has_value());  // a step time no float holds
  const std::string huge_tail =
      "step 1 step_time 0.5s throughput 1 seq/s step loss 3 grad norm " + std::string(1 << 20, 'x');
  const auto tail = parser().parse(huge_tail);  // an ignored field may be long: the figures are right
  REQUIRE(tail);
  CHECK(tail->step == 2u);
}

TEST_CASE("progress line: the CPU stand-ins' own output reads as the record says") {
  for (const auto& [file, steps] :
       {std::pair<std::string, std::vector<std::uint64_t>>{"progress/tp_zero1.log", {2, 4, 6}},
        {"progress/run_llama_nxd.log", {1, 2, 3, 4}}}) {
    INFO(file);
    std::ifstream in(test::fixture(file));
    REQUIRE(in);
    std::vector<std::uint64_t> seen;
    bool finished = false;
    for (std::string line; std::getline(in, line);) {
      const auto parsed = parser().parse(line);
      if (!parsed) continue;
      if (parsed->kind == LineKind::step) seen.push_back(*parsed->step);
      finished |= parsed->kind == LineKind::finished;
    }
    CHECK(seen == steps);
    if (file == "progress/run_llama_nxd.log") CHECK(finished);
  }
}

namespace {
// A TorchTitan record as the progress reader sees it: with no log format of its own, the step
// line of upstream's metrics logger stands in.
ProgressParser titan_parser() {
  upstream::Interface record;
  record.package = "torchtitan-neuron";
  record.release = "2.33";
  auto p = ProgressParser::from(std::span<const upstream::Interface>(&record, 1));
  REQUIRE(p);
  REQUIRE(p->formats() == 1);
  return std::move(*p);
}
}  // namespace

TEST_CASE("progress line: TorchTitan's step line, with colours and torchrun's rank prefix") {
  const auto p = titan_parser();
  // As upstream prints it under torchrun: rank prefix, logger prefix, ANSI colour codes, the step
  // padded to two characters, tps per device with thousands separators, mfu maybe N/A.
  const std::string line =
      "[rank0]:[titan] 2026-11-27 16:40:01,123 - root - INFO - \x1b[31mstep:  5  \x1b[32mloss:  7.81234  "
      "\x1b[38;2;180;60;0mgrad_norm:  1.2345  \x1b[36mmemory:  3.21GiB(4.00%)  \x1b[34mtps: 12,345  "
      "\x1b[36mtflops: 1.23  \x1b[35mmfu: N/A\x1b[39m";
  const auto got = p.parse(line);
  REQUIRE(got);
  CHECK(got->kind == LineKind::step);
  CHECK(got->step == 5u);  // counted before it is logged: the fifth step
  CHECK(*got->loss == Approx(7.81234));
  CHECK(*got->tokens_per_second_per_device == Approx(12345));
  CHECK_FALSE(got->seq_per_second);
  // Without colours (--metrics.disable_color_printing) and without a rank prefix: the same.
  const auto plain = p.parse(
      "[titan] 2026-11-27 16:40:01,123 - root - INFO - step: 120  loss:  2.50000  grad_norm:  0.5000  "
      "memory: 10.00GiB(12.50%)  tps: 1,234,567  tflops: 1,234.50  mfu: 12.34%");
  REQUIRE(plain);
  CHECK(plain->step == 120u);
  CHECK(*plain->tokens_per_second_per_device == Approx(1234567));
  // A validation line is not a training step, nor is a line cut short or with a bad figure.
  CHECK_FALSE(
      p.parse("[rank0]:[titan] 2026-11-27 - root - INFO - validate step:  5  loss:  7.8123  memory:  "
              "3.21GiB(4.00%)  tps: 12,345"));
  CHECK_FALSE(p.parse("[titan] x - INFO - step:  5  loss:  7.81234  grad_norm:  1.2345"));
  CHECK_FALSE(
      p.parse("[titan] x - INFO - step: five  loss:  7.81234  grad_norm:  1.2345  memory:  3.21GiB(4.00%)  "
              "tps: 12,345  tflops: 1.23  mfu: N/A"));
  CHECK_FALSE(
      p.parse("[titan] x - INFO - substep: 5  loss:  7.81234  grad_norm:  1.2345  memory:  3.21GiB(4.00%)  "
              "tps: 12,345  tflops: 1.23  mfu: N/A"));
}

TEST_CASE("progress line: the bundled TorchTitan record's step line reads as the fallback does") {
  const auto line = parser().parse(
      "[rank0]:[titan] 2026-11-27 16:40:01,123 - root - INFO - \x1b[31mstep:  7  \x1b[32mloss:  3.50000  "
      "\x1b[38;2;180;60;0mgrad_norm:  0.5000  \x1b[38;2;54;234;195mmemory:  0.10GiB(1.00%)  \x1b[34mtps: "
      "2,048  "
      "\x1b[36mtflops: 0.00  \x1b[35mmfu: N/A\x1b[39m");
  REQUIRE(line);
  CHECK(line->step == 7u);
  CHECK(*line->loss == Approx(3.5));
  CHECK(*line->tokens_per_second_per_device == Approx(2048));
}

TEST_CASE("progress line: clean_line takes out colour codes and rank prefixes only") {
  CHECK(clean_line("\x1b[31mred\x1b[0m plain") == "red plain");
  CHECK(clean_line("[rank12]:[rank3]:text") == "text");
  CHECK(clean_line("[rank]:text") == "[rank]:text");
  CHECK(clean_line("[rankX]: text") == "[rankX]: text");
  CHECK(clean_line("trailing escape \x1b[") == "trailing escape ");
  CHECK(clean_line("") == "");
}
