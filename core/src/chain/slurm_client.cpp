#include "trnslurm/chain/slurm_client.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {
namespace {

constexpr std::string_view squeue_format =
    "JobID:|,State:|,Reason:|,TimeUsed:|,NumNodes:|,NodeList:|,exit_code:|,Name:|,Comment:";
constexpr std::size_t squeue_fields = 9;

// What squeue and scontrol say of a job id slurmctld does not know (never had, or forgot after
// MinJobAge).
constexpr std::string_view unknown_job = "Invalid job id specified";

std::string join_ids(const std::vector<JobId>& ids) {
  return fmt::format("{}", fmt::join(ids, ","));
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// Splits `line` at the first `fields - 1` '|'; the last field keeps any '|' of its own.
std::vector<std::string> split_fields(std::string_view line, std::size_t fields) {
  std::vector<std::string> out;
  while (out.size() + 1 < fields) {
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) break;
    out.emplace_back(line.substr(0, bar));
    line.remove_prefix(bar + 1);
  }
  out.emplace_back(line);
  return out;
}

template <class F>
Result<std::vector<JobRow>> parse_lines(std::string_view text, std::size_t fields, const char* what, F fill) {
  std::vector<JobRow> rows;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (trim(line).empty()) continue;
    auto f = split_fields(line, fields);
    if (f.size() != fields) {
      return fail(ErrorKind::slurm, fmt::format("unexpected {} output: '{}'", what, line),
                  fmt::format("{} line {}", what, line_no));
    }
    JobRow row;
    const auto id = parse_number<JobId>(trim(f[0]));
    // Array or het job ids ("12_3", "12+0") are not ours: skip them.
    if (!id) continue;
    row.id = *id;
    fill(row, f);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string exit_code_from_status(std::string_view raw) {
  const auto status = parse_number<int>(raw);
  if (!status) return std::string(raw);
  const int code = (*status >> 8) & 0xff;
  const int signal = *status & 0x7f;
  return signal != 0 ? fmt::format("{}:{}", code, signal) : std::to_string(code);
}

std::vector<std::string> squeue_argv(const std::vector<JobId>& ids) {
  return {"squeue", "-h", "-t", "all", "-j", join_ids(ids), "-O", std::string(squeue_format)};
}

Result<std::vector<JobRow>> parse_squeue(std::string_view text) {
  return parse_lines(text, squeue_fields, "squeue", [](JobRow& row, std::vector<std::string>& f) {
    row.state = trim(f[1]);
    row.reason = trim(f[2]);
    row.elapsed = trim(f[3]);
    row.nodes = trim(f[4]);
    row.nodelist = trim(f[5]);
    row.exit_code = exit_code_from_status(trim(f[6]));
    row.name = trim(f[7]);
    row.comment = trim(f[8]);
  });
}

Result<std::vector<JobRow>> parse_sacct(std::string_view text) {
  return parse_lines(text, squeue_fields, "sacct", [](JobRow& row, std::vector<std::string>& f) {
    // "CANCELLED by 0" -> "CANCELLED".
    row.state = trim(f[1].substr(0, f[1].find(' ')));
    row.reason = trim(f[2]);
    row.elapsed = trim(f[3]);
    row.nodes = trim(f[4]);
    row.nodelist = trim(f[5]);
    row.exit_code = trim(f[6]);
    if (row.exit_code.ends_with(":0")) row.exit_code.resize(row.exit_code.size() - 2);
    row.name = trim(f[7]);
    row.comment = trim(f[8]);
  });
}

Result<JobId> CommandSlurmClient::sbatch(const std::vector<std::string>& argv) {
  auto r = run_(argv);
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  if (r->exit_code != 0) {
    auto msg = trim(r->err);
    if (msg.empty()) msg = trim(r->out);
    return fail(ErrorKind::slurm, msg.empty() ? fmt::format("sbatch exited with {}", r->exit_code) : msg,
                "sbatch");
  }
  auto id = parse_job_id(r->out);
  if (!id) return std::unexpected(classified(id.error(), ErrorKind::slurm));
  return id;
}

Result<void> CommandSlurmClient::scancel(const std::vector<JobId>& ids) {
  if (ids.empty()) return {};
  auto r = run_({"scancel", join_ids(ids)});
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  if (r->exit_code != 0) return fail(ErrorKind::slurm, trim(r->err), "scancel " + join_ids(ids));
  return {};
}

Result<std::vector<JobRow>> CommandSlurmClient::squeue(const std::vector<JobId>& ids) {
  if (ids.empty()) return std::vector<JobRow>{};
  auto r = run_(squeue_argv(ids));
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  if (r->exit_code != 0) {
    // Only forgotten ids: squeue refuses the whole request. Not an error for us.
    if (r->err.find(unknown_job) != std::string::npos) return std::vector<JobRow>{};
    return fail(ErrorKind::slurm, trim(r->err), "squeue");
  }
  return parse_squeue(r->out);
}

Result<std::vector<JobRow>> CommandSlurmClient::squeue_by_name(const std::vector<std::string>& names) {
  auto r = run_({"squeue", "-h", "-t", "all", "-n", fmt::format("{}", fmt::join(names, ",")), "-O",
                 std::string(squeue_format)});
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  if (r->exit_code != 0) return fail(ErrorKind::slurm, trim(r->err), "squeue");
  return parse_squeue(r->out);
}

Result<std::optional<std::vector<JobRow>>> CommandSlurmClient::sacct(const std::vector<JobId>& ids) {
  if (ids.empty()) return std::optional<std::vector<JobRow>>{std::vector<JobRow>{}};
  auto r = run_({"sacct", "-n", "-X", "-P", "-j", join_ids(ids), "-o",
                 "JobID,State,Reason,Elapsed,NNodes,NodeList,ExitCode,JobName,Comment"});
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  if (r->exit_code != 0) {
    // No accounting (accounting_storage/none, or slurmdbd down): fall back, don't fail.
    return std::optional<std::vector<JobRow>>{};
  }
  auto rows = parse_sacct(r->out);
  if (!rows) return std::unexpected(classified(rows.error(), ErrorKind::slurm));
  return std::optional<std::vector<JobRow>>{std::move(*rows)};
}

Result<std::string> CommandSlurmClient::scontrol(std::vector<std::string> args) {
  args.insert(args.begin(), "scontrol");
  auto r = run_(args);
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  if (r->exit_code != 0) {
    const auto why = trim(r->err);
    return fail(
        ErrorKind::slurm, why.empty() ? fmt::format("exit code {}", r->exit_code) : why,
        fmt::format("{}", fmt::join(args.begin(),
                                    args.begin() + std::min<std::ptrdiff_t>(3, std::ssize(args)), " ")));
  }
  return std::move(r->out);
}

Result<std::optional<std::string>> CommandSlurmClient::show_job(JobId id) {
  auto r = scontrol({"show", "job", "-o", std::to_string(id)});
  if (r) return std::optional<std::string>(std::move(*r));
  if (r.error().what.find(unknown_job) != std::string::npos) return std::optional<std::string>();
  return std::unexpected(classified(r.error(), ErrorKind::slurm));
}

Result<std::string> CommandSlurmClient::show_node(const std::string& node) {
  return scontrol({"show", "node", "-o", node});
}

Result<void> CommandSlurmClient::requeue(JobId id) {
  auto r = scontrol({"requeue", std::to_string(id)});
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  return {};
}

Result<void> CommandSlurmClient::exclude_nodes(JobId id, const std::string& node_list) {
  auto r = scontrol({"update", fmt::format("JobId={}", id), "ExcNodeList=" + node_list});
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  return {};
}

Result<std::string> CommandSlurmClient::controller_version() {
  auto r = scontrol({"show", "config"});
  if (!r) return std::unexpected(classified(r.error(), ErrorKind::slurm));
  auto v = parse_config_version(*r);
  if (!v) return fail(ErrorKind::slurm, "no SLURM_VERSION in its output", "scontrol show config");
  return std::move(*v);
}

std::optional<std::string> parse_config_version(std::string_view text) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || trim(line.substr(0, eq)) != "SLURM_VERSION") continue;
    auto value = trim(line.substr(eq + 1));
    if (!value.empty()) return value;
  }
  return std::nullopt;
}

std::vector<std::string> node_features_argv() {
  return {"sinfo", "-h", "-N", "-o", "%f"};
}

std::vector<std::string> parse_node_features(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find_first_of(",\n", start);
    const auto feature =
        trim(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (!feature.empty() && feature != "(null)" && std::find(out.begin(), out.end(), feature) == out.end())
      out.push_back(feature);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace trnslurm
