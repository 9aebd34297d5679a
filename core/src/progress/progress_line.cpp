#include "trnslurm/progress/progress_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {
namespace {

// The expressions the NxD example trainers print (interfaces/neuronx-distributed-*.json) and
// what each one is. A release that prints something new leaves it `ignored` until it is added
// here; the unit tests fail when a step line loses its step, loss or throughput that way.
constexpr std::array<std::pair<std::string_view, FieldRole>, 13> roles{{
    {"step", FieldRole::step},
    {"total_steps", FieldRole::step},
    {"global_step", FieldRole::step},
    {"epoch", FieldRole::epoch},
    {"step_loss", FieldRole::loss},
    {"loss.detach().cpu().item()", FieldRole::loss},
    {"final_loss", FieldRole::loss},
    {"learning_rate", FieldRole::learning_rate},
    {"throughput", FieldRole::seq_per_second},
    {"tps", FieldRole::seq_per_second},
    {"iteration_time", FieldRole::step_seconds},
    // TorchTitan (torchtitan/components/metrics.py): the loss averaged over the ranks, and the
    // tokens per second of one device, rounded.
    {"global_avg_loss", FieldRole::loss},
    {"round(tps)", FieldRole::tokens_per_second_per_device},
}};
// Fields that print a terminal colour code (TorchTitan's `color.red`...): no text once the line
// is cleaned.
constexpr std::string_view colour_field = "color.";
// Printed at the end of an epoch, the last throughput the logger kept.
constexpr std::string_view last_throughput = "logger.throughputs[-1]";

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

std::optional<LineKind> kind_of(std::string_view label) {
  // A Logger.log line has no label; a record of a trainer that prints its step line elsewhere
  // (TorchTitan's metrics logger) labels it "step".
  if (label.empty() || label == "step") return LineKind::step;
  if (label == "epoch_begin") return LineKind::epoch_begin;
  if (label == "epoch_end") return LineKind::epoch_end;
  if (label == "finished") return LineKind::finished;
  return std::nullopt;
}

// A field's text as its role's value; false when it does not read as one. A width's padding
// (`{step:2}`) and a grouped number's thousands separators are not part of the value.
bool store(FieldRole role, std::string_view raw, bool padded, bool grouped, ProgressLine& out) {
  std::string ungrouped;
  std::string_view text = raw;
  while (padded && text.starts_with(' ')) text.remove_prefix(1);
  if (grouped && role != FieldRole::ignored) {
    for (const char c : text)
      if (c != ',') ungrouped += c;
    text = ungrouped;
  }
  const auto finite_at_least = [](std::optional<double> v, double low) {
    return v && std::isfinite(*v) && *v >= low ? v : std::nullopt;
  };
  switch (role) {
    case FieldRole::ignored:
      return true;
    case FieldRole::step:
      out.step = parse_number<std::uint64_t>(text);
      return out.step.has_value();
    case FieldRole::epoch:
      out.epoch = parse_number<std::uint64_t>(text);
      return out.epoch.has_value();
    case FieldRole::loss:
      out.loss = parse_number<double>(text);  // nan and inf are what a diverged run prints
      return out.loss.has_value();
    case FieldRole::learning_rate:
      out.learning_rate = finite_at_least(parse_number<double>(text), 0.0);
      return out.learning_rate.has_value();
    case FieldRole::seq_per_second: {
      const auto v = parse_number<double>(text);
      out.seq_per_second = v && std::isfinite(*v) && *v > 0 ? v : std::nullopt;
      return out.seq_per_second.has_value();
    }
    case FieldRole::step_seconds:
      out.step_seconds = finite_at_least(parse_number<double>(text), 0.0);
      return out.step_seconds.has_value();
    case FieldRole::tokens_per_second_per_device: {
      const auto v = parse_number<double>(text);
      out.tokens_per_second_per_device = v && std::isfinite(*v) && *v > 0 ? v : std::nullopt;
      return out.tokens_per_second_per_device.has_value();
    }
  }
  return false;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::string clean_line(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    // ESC [ parameters intermediates final-byte (ECMA-48 control sequence).
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && (static_cast<unsigned char>(line[j]) < 0x40 || line[j] > 0x7e)) ++j;
      i = j;
      continue;
    }
    out += line[i];
  }
  // torchrun's per-rank prefix (`[rank0]:`), possibly more than one.
  std::string_view rest = out;
  while (rest.starts_with("[rank")) {
    std::size_t j = 5;
    while (j < rest.size() && is_digit(rest[j])) ++j;
    if (j == 5 || rest.substr(j, 2) != "]:") break;
    rest.remove_prefix(j + 2);
  }
  return std::string(rest);
}

upstream::LogFormat torchtitan_step_format() {
  upstream::LogFormat f;
  f.path = "torchtitan/components/metrics.py";
  f.key = f.path + "#step";
  f.function = "MetricsProcessor.log";
  const auto lit = [&](std::string text) { f.pieces.push_back({std::move(text), std::nullopt, ""}); };
  const auto field = [&](std::string expr, std::string spec = "") {
    f.pieces.push_back({"", std::move(expr), std::move(spec)});
  };
  lit("step: ");
  field("step", "2");
  lit("  loss: ");
  field("global_avg_loss", "8.5f");
  lit("  grad_norm: ");
  field("grad_norm", "7.4f");
  lit("  memory: ");
  field("device_mem_stats.max_reserved_gib", "5.2f");
  lit("GiB(");
  field("device_mem_stats.max_reserved_pct", ".2f");
  lit("%)  tps: ");
  field("round(tps)", ",");
  lit("  tflops: ");
  field("tflops", ",.2f");
  lit("  mfu: ");
  field("mfu_str");
  // The trainer counts the step before it runs it (train_state.step += 1), then logs it.
  f.call = upstream::LogCall{
      "torchtitan/train.py", "Trainer.train_step", {{"step", "self.step"}}, {}, {{"self.step", "before"}}};
  return f;
}

FieldRole field_role(std::string_view expression) {
  if (expression == last_throughput) return FieldRole::seq_per_second;
  const auto* it = std::ranges::find(roles, expression, &std::pair<std::string_view, FieldRole>::first);
  return it == roles.end() ? FieldRole::ignored : it->second;
}

Result<LineFormat> LineFormat::compile(const upstream::LogFormat& format, bool logged) {
  const auto kind = kind_of(format.label);
  if (!kind) return fail(fmt::format("progress line '{}' is of no known kind", format.key), format.key);
  LineFormat f;
  f.key_ = format.key;
  f.kind_ = *kind;
  f.logged_ = logged;
  std::string literal;
  const upstream::LogPiece* step_field = nullptr;
  for (const auto& piece : format.pieces) {
    if (!piece.field) {
      literal += piece.literal;
      continue;
    }
    if (piece.field->starts_with(colour_field)) continue;
    if (!f.parts_.empty() && literal.empty())
      return fail(fmt::format("field '{}' is printed right after another field", *piece.field), format.key,
                  "such a line cannot be read back");
    const auto role = field_role(*piece.field);
    if (role == FieldRole::step) step_field = &piece;
    const bool width = !piece.spec.empty() && piece.spec.front() >= '1' && piece.spec.front() <= '9';
    f.parts_.push_back(
        {std::exchange(literal, {}), role, true, piece.spec.find(',') != std::string::npos, width});
  }
  f.tail_ = std::move(literal);
  for (const auto& part : f.parts_)
    f.signature_ += fmt::format("{}{{{}}}", part.literal, static_cast<int>(part.role));
  f.signature_ += f.tail_;
  if (logged) f.signature_ += "+logged";
  if (f.kind_ != LineKind::step) return f;
  if (step_field == nullptr)
    return fail("a step line without a step field", format.key,
                "add its field to core/src/progress/progress_line.cpp");
  // What the logged step counts: the record's call says whether the counter moved before it.
  const auto& call = format.call;
  if (!call)
    return fail("the record does not say how the trainer calls its logger", format.key,
                "regenerate the record with tools/upstream-interface (docs/upstream.md)");
  const auto arg = call->arguments.find(*step_field->field);
  const auto counted = arg == call->arguments.end() ? call->counted.end() : call->counted.find(arg->second);
  if (counted == call->counted.end())
    return fail(fmt::format("the record does not say when the step counter '{}' moves", *step_field->field),
                format.key, "regenerate the record with tools/upstream-interface (docs/upstream.md)");
  f.step_offset_ = counted->second == "after" ? 1 : 0;
  f.signature_ += fmt::format("+{}", f.step_offset_);
  return f;
}

std::optional<ProgressLine> LineFormat::match(std::string_view line) const {
  line = trim_right(line);
  ProgressLine out;
  out.kind = kind_;
  std::size_t pos = 0;
  // A line printed through a logger has its prefix (`[titan] <time> - root - INFO - `) first:
  // the format starts at its first literal, after a blank.
  if (logged_ && !parts_.empty() && !parts_.front().literal.empty() &&
      !line.starts_with(parts_.front().literal)) {
    const auto at = line.find(parts_.front().literal);
    if (at == std::string_view::npos || line[at - 1] != ' ') return std::nullopt;
    line.remove_prefix(at);
  }
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    const auto& part = parts_[i];
    if (line.substr(pos, part.literal.size()) != part.literal) return std::nullopt;
    pos += part.literal.size();
    const bool last = i + 1 == parts_.size();
    std::size_t end = 0;
    if (last && tail_.empty()) {
      end = line.size();
    } else if (last) {
      // The tail ends the line (trailing blanks trimmed from both).
      const auto tail = trim_right(tail_);
      if (line.size() < pos + tail.size() || line.substr(line.size() - tail.size()) != tail)
        return std::nullopt;
      end = line.size() - tail.size();
    } else {
      const auto& next = parts_[i + 1].literal;
      end = line.find(next, pos);
      // "... seq/s " and an empty last field: the trimmed line ends in the literal, trimmed.
      if (end == std::string_view::npos && i + 2 == parts_.size() && tail_.empty() &&
          parts_.back().role == FieldRole::ignored && line.substr(pos).ends_with(trim_right(next))) {
        if (!store(part.role, line.substr(pos, line.size() - pos - trim_right(next).size()), part.padded,
                   part.grouped, out))
          return std::nullopt;
        break;
      }
      if (end == std::string_view::npos) return std::nullopt;
    }
    if (!store(part.role, line.substr(pos, end - pos), part.padded, part.grouped, out)) return std::nullopt;
    pos = end;
  }
  if (parts_.empty() && line != trim_right(tail_)) return std::nullopt;
  if (out.step && kind_ == LineKind::step) *out.step += step_offset_;
  return out;
}

Result<ProgressParser> ProgressParser::from(std::span<const upstream::Interface> records) {
  ProgressParser p;
  for (const auto& record : records) {
    auto formats = record.log_formats;
    if (record.package.starts_with("torchtitan")) {
      // TorchTitan's record: its step line as recorded, with when the step counter moves taken
      // from the fallback where the record does not say; the fallback line where it has none.
      const auto fallback = torchtitan_step_format();
      bool has_step = false;
      for (auto& f : formats) {
        if (kind_of(f.label) != LineKind::step) continue;
        has_step = true;
        if (!f.call) f.call = fallback.call;
      }
      if (!has_step) formats.push_back(fallback);
    }
    for (const auto& format : formats) {
      if (!kind_of(format.label)) continue;  // a line of no use to progress
      auto f = LineFormat::compile(format, record.package.starts_with("torchtitan"));
      if (!f) {
        f.error().where = fmt::format("{}: log_formats[{}]", record.source, format.key);
        return std::unexpected(f.error());
      }
      // Releases that print the same line share one format.
      if (std::ranges::find(p.formats_, f->signature(), &LineFormat::signature) == p.formats_.end())
        p.formats_.push_back(std::move(*f));
    }
  }
  return p;
}

const ProgressParser& ProgressParser::bundled() {
  static const ProgressParser parser = [] {
    auto p = from(upstream::bundled_interfaces());
    return p ? std::move(*p) : ProgressParser{};
  }();
  return parser;
}

std::optional<ProgressLine> ProgressParser::parse(std::string_view line) const {
  const bool plain = line.find('\x1b') == std::string_view::npos && !line.starts_with("[rank");
  const std::string cleaned = plain ? std::string() : clean_line(line);
  const std::string_view text = plain ? line : std::string_view(cleaned);
  for (const auto& f : formats_)
    if (auto found = f.match(text)) return found;
  return std::nullopt;
}

}  // namespace trnslurm
