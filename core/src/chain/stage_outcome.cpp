#include "trnslurm/chain/stage_outcome.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "trnslurm/chain/chain_progress.hpp"
#include "trnslurm/util/fd.hpp"
#include "trnslurm/util/file.hpp"
#include "trnslurm/util/printable.hpp"

namespace trnslurm {
namespace {

// A record is a line of numbers and fixed words: anything larger is not one.
constexpr std::size_t max_record_bytes = 4096;

std::optional<std::int64_t> integer(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

std::string word(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The last non-empty line of a log, from its last bytes only: a log can be gigabytes. Opened
// without blocking and checked once open: a FIFO or a device in the log's place, even one put
// there after a look by name, would block or never end (docs/security.md).
std::string last_line(const std::filesystem::path& log) {
  constexpr off_t tail = 8192;
  const Fd fd(::open(log.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return {};
  const off_t from = std::max<off_t>(0, st.st_size - tail);
  std::string text(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(fd.get(), text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  const auto nl = text.rfind('\n');
  return printable(nl == std::string::npos ? text : text.substr(nl + 1), 200);
}

// Host names, signal names and causes are words: anything else (escape sequences for a
// terminal, say) makes the file not a record.
bool is_word(std::string_view s) {
  return s.size() <= 64 && std::ranges::all_of(s, [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                  c == '_' || c == '.';
         });
}

bool known_state(std::string_view s) {
  return s == "running" || s == "completed" || s == "failed" || s == "signalled" || s == "requeued";
}

}  // namespace

std::filesystem::path outcomes_dir(const std::filesystem::path& run_dir) {
  return run_dir / "outcomes";
}

std::optional<OutcomeRecord> parse_outcome(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  OutcomeRecord r;
  r.stage = word(j, "stage");
  r.state = word(j, "state");
  const auto job = integer(j, "job");
  const auto attempt = integer(j, "attempt");
  const auto start = integer(j, "start");
  if (r.stage.empty() || !known_state(r.state) || !job || *job <= 0 || !attempt || *attempt < 0 ||
      *attempt > 1'000'000 || !start)
    return std::nullopt;
  r.job = static_cast<JobId>(*job);
  r.attempt = static_cast<std::uint32_t>(*attempt);
  r.start = *start;
  r.end = integer(j, "end");
  if (const auto code = integer(j, "exit"); code && *code >= 0 && *code <= 255)
    r.exit = static_cast<int>(*code);
  r.signal = word(j, "signal");
  r.cause = word(j, "cause");
  r.host = word(j, "host");
  if (!is_word(r.stage) || !is_word(r.signal) || !is_word(r.cause) || !is_word(r.host)) return std::nullopt;
  // An ended attempt without its exit status says nothing certain.
  if (r.state != "running" && r.state != "requeued" && !r.exit) return std::nullopt;
  return r;
}

std::vector<OutcomeRecord> read_outcomes(const std::filesystem::path& run_dir) {
  std::vector<OutcomeRecord> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(outcomes_dir(run_dir), ec), end; !ec && it != end;
       it.increment(ec)) {
    // Temporary files (<name>.json.tmp.<pid>) are not records yet.
    if (it->path().extension() != ".json" || !it->is_regular_file(ec)) continue;
    const auto text = read_file(it->path(), max_record_bytes);
    if (!text) continue;
    if (auto r = parse_outcome(*text)) out.push_back(std::move(*r));
  }
  return out;
}

const OutcomeRecord* deciding_record(std::span<const OutcomeRecord> records, std::string_view stage,
                                     JobId job) {
  const OutcomeRecord* best = nullptr;
  for (const auto& r : records) {
    if (r.stage != stage || r.job != job) continue;
    // Two records of one attempt cannot both exist (one file each); keep the first if they do.
    if (best == nullptr || r.attempt > best->attempt) best = &r;
  }
  return best;
}

StageEvidence gather_evidence(const std::filesystem::path& run_dir, std::string_view chain_id,
                              std::string_view stage, JobId job, const std::filesystem::path& checkpoint_dir,
                              const std::filesystem::path& export_dir, std::string_view host) {
  StageEvidence e;
  e.stage = stage;
  e.log = output_path(run_dir, stage, job).string();
  e.last_log_line = last_line(e.log);
  if (!host.empty())
    e.to_run.push_back(fmt::format("sinfo -R -n {}   # why {} went down, if it did", host, host));
  e.to_run.push_back(fmt::format("trnslurm logs {} --stage {}", chain_id, stage));
  if (!checkpoint_dir.empty()) {
    e.checkpoint_dir = checkpoint_dir.string();
    if (const auto mark = newest_completed_checkpoint(checkpoint_dir)) {
      e.checkpoint_step = mark->step;
      e.checkpoint_time = mark->time;
    }
  }
  if (!export_dir.empty()) {
    e.export_dir = export_dir.string();
    std::error_code ec;
    std::size_t n = 0;
    for (std::filesystem::directory_iterator it(export_dir, ec), end; !ec && it != end; it.increment(ec)) ++n;
    if (!ec) e.export_entries = n;
  }
  if (e.checkpoint_step && (!e.export_entries || *e.export_entries == 0))
    e.to_run.push_back(fmt::format("trnslurm submit --resume-from {}   # to go on from step {}", chain_id,
                                   *e.checkpoint_step));
  return e;
}

std::string slurm_elapsed(std::int64_t s) {
  if (s < 0) s = 0;
  const auto days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60, seconds = s % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds);
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, seconds);
  return fmt::format("{}:{:02}", minutes, seconds);
}

}  // namespace trnslurm
