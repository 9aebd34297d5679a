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
constexpr std::array<std::pair<std::string_view, FieldRole>, 11> roles{{
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
}};
// Printed at the end of an epoch, the last throughput the logger kept.
constexpr std::string_view last_throughput = "logger.throughputs[-1]";

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

std::optional<LineKind> kind_of(std::string_view label) {
  if (label.empty()) return LineKind::step;
  if (label == "epoch_begin") return LineKind::epoch_begin;
  if (label == "epoch_end") return LineKind::epoch_end;
  if (label == "finished") return LineKind::finished;
  return std::nullopt;
}

// A field's text as its role's value; false when it does not read as one.
bool store(FieldRole role, std::string_view text, ProgressLine& out) {
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
  }
  return false;
}

}  // namespace

FieldRole field_role(std::string_view expression) {
  if (expression == last_throughput) return FieldRole::seq_per_second;
  const auto* it = std::ranges::find(roles, expression, &std::pair<std::string_view, FieldRole>::first);
  return it == roles.end() ? FieldRole::ignored : it->second;
}

Result<LineFormat> LineFormat::compile(const upstream::LogFormat& format) {
  const auto kind = kind_of(format.label);
  if (!kind) return fail(fmt::format("progress line '{}' is of no known kind", format.key), format.key);
  LineFormat f;
  f.key_ = format.key;
  f.kind_ = *kind;
  std::string literal;
  const upstream::LogPiece* step_field = nullptr;
  for (const auto& piece : format.pieces) {
    if (!piece.field) {
      literal += piece.literal;
      continue;
    }
    if (!f.parts_.empty() && literal.empty())
      return fail(fmt::format("field '{}' is printed right after another field", *piece.field), format.key,
                  "such a line cannot be read back");
    const auto role = field_role(*piece.field);
    if (role == FieldRole::step) step_field = &piece;
    f.parts_.push_back({std::exchange(literal, {}), role, true});
  }
  f.tail_ = std::move(literal);
  for (const auto& part : f.parts_)
    f.signature_ += fmt::format("{}{{{}}}", part.literal, static_cast<int>(part.role));
  f.signature_ += f.tail_;
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
        if (!store(part.role, line.substr(pos, line.size() - pos - trim_right(next).size()), out))
          return std::nullopt;
        break;
      }
      if (end == std::string_view::npos) return std::nullopt;
    }
    if (!store(part.role, line.substr(pos, end - pos), out)) return std::nullopt;
    pos = end;
  }
  if (parts_.empty() && line != trim_right(tail_)) return std::nullopt;
  if (out.step && kind_ == LineKind::step) *out.step += step_offset_;
  return out;
}

Result<ProgressParser> ProgressParser::from(std::span<const upstream::Interface> records) {
  ProgressParser p;
  for (const auto& record : records) {
    for (const auto& format : record.log_formats) {
      if (!kind_of(format.label)) continue;  // a line of no use to progress
      auto f = LineFormat::compile(format);
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
  for (const auto& f : formats_)
    if (auto found = f.match(line)) return found;
  return std::nullopt;
}

}  // namespace trnslurm
