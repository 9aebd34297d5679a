#pragma once
// The progress lines upstream trainers print, read back: each format comes from an interface
// record (upstream/interface.hpp, log_formats), never typed here; what each printed field means
// (step, loss, learning rate, throughput) is the one thing this file decides (docs/progress.md).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/upstream/interface.hpp"

namespace trnslurm {

enum class LineKind { step, epoch_begin, epoch_end, finished };

// What one line says. `step` counts the optimizer steps done when the line was printed: a
// trainer that logs before counting (the record's call says "after") prints one less.
struct ProgressLine {
  LineKind kind = LineKind::step;
  std::optional<std::uint64_t> step;
  std::optional<std::uint64_t> epoch;
  std::optional<double> loss;            // may be NaN or inf: the trainer printed it so
  std::optional<double> learning_rate;   // >= 0
  std::optional<double> seq_per_second;  // whole job, > 0 and finite
  std::optional<double> step_seconds;    // >= 0 and finite
  // Tokens per second of one device (TorchTitan's `tps`): the job's is this x the world size.
  std::optional<double> tokens_per_second_per_device;  // > 0 and finite
};

// What a printed field stands for. `ignored` fields (a time stamp, a gradient-norm message)
// match any text.
enum class FieldRole {
  step,
  epoch,
  loss,
  learning_rate,
  seq_per_second,
  step_seconds,
  tokens_per_second_per_device,
  ignored
};
FieldRole field_role(std::string_view expression);

// A printed line as the formats are matched against it: terminal colour codes (ANSI escape
// sequences, which TorchTitan prints unless --metrics.disable_color_printing) and torchrun's
// `[rankN]:` prefixes taken out.
std::string clean_line(std::string_view line);

// The step line of TorchTitan's metrics logger, for a torchtitan record that holds no log format
// of its own (the facts of upstream torchtitan/components/metrics.py, MetricsProcessor.log).
upstream::LogFormat torchtitan_step_format();

// One record line compiled for matching: the literal pieces must appear in order, each field is
// the text between them and must read as its role's number.
class LineFormat {
 public:
  // Refuses a Logger.log line without a step, and two fields with nothing between them.
  // `logged`: the trainer prints the line through Python's logging, whose prefix (time, logger,
  // level) comes first (TorchTitan); otherwise the line starts with the format.
  static Result<LineFormat> compile(const upstream::LogFormat& format, bool logged = false);
  std::optional<ProgressLine> match(std::string_view line) const;
  const std::string& key() const { return key_; }
  const std::string& signature() const { return signature_; }  // equal for lines read alike

 private:
  struct Part {
    std::string literal;  // before the field (may be empty for the first)
    FieldRole role = FieldRole::ignored;
    bool has_field = false;
    bool grouped = false;  // printed with thousands separators (format spec ',')
    bool padded = false;   // printed with a width (format spec "8.5f"): blanks before the value
  };
  std::string key_;
  std::string signature_;
  LineKind kind_ = LineKind::step;
  std::vector<Part> parts_;
  std::string tail_;               // the literal after the last field
  std::uint64_t step_offset_ = 0;  // 1 when the trainer logs before counting the step
  bool logged_ = false;
};

// Every line format of `records` (the bundled ones by default), one per distinct key.
class ProgressParser {
 public:
  static Result<ProgressParser> from(std::span<const upstream::Interface> records);
  static const ProgressParser& bundled();  // the records compiled in; empty if one is broken
  // A line without its newline; nullopt when no format matches it whole.
  std::optional<ProgressLine> parse(std::string_view line) const;
  std::size_t formats() const { return formats_.size(); }

 private:
  std::vector<LineFormat> formats_;
};

}  // namespace trnslurm
