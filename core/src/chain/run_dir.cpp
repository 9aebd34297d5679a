#include "trnslurm/chain/run_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <sstream>

#include "trnslurm/util/enum_names.hpp"
#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::array<EnumName<ManifestState>, 6> state_names{
    {{ManifestState::dry_run, "dry-run"},
     {ManifestState::submitting, "submitting"},
     {ManifestState::submitted, "submitted"},
     {ManifestState::rolled_back, "rolled-back"},
     {ManifestState::rollback_failed, "rollback-failed"},
     {ManifestState::cancelled, "cancelled"}}};

}  // namespace

std::string_view to_string(ManifestState state) {
  return name_of(state_names, state);
}

std::optional<ManifestState> parse_manifest_state(std::string_view text) {
  return value_named(state_names, text);
}

std::string manifest_to_json(const Manifest& m) {
  json stages = json::array();
  for (const auto& s : m.stages) {
    json j{{"name", s.name}, {"sbatch_argv", s.sbatch_argv}};
    j["job_id"] = s.job_id ? json(*s.job_id) : json(nullptr);
    if (!s.last_state.empty()) j["last_state"] = s.last_state;
    if (!s.last_exit_code.empty()) j["last_exit_code"] = s.last_exit_code;
    if (!s.last_reason.empty()) j["last_reason"] = s.last_reason;
    if (!s.last_elapsed.empty()) j["last_elapsed"] = s.last_elapsed;
    if (!s.last_nodes.empty()) j["last_nodes"] = s.last_nodes;
    stages.push_back(std::move(j));
  }
  json j{{"chain_id", m.chain_id},
         {"created", m.created},
         {"state", to_string(m.state)},
         {"run_dir", m.run_dir.string()},
         {"stages", std::move(stages)}};
  for (const auto& [key, value] : {std::pair{"checkpoint_dir", &m.checkpoint_dir},
                                   {"converted_dir", &m.converted_dir},
                                   {"export_dir", &m.export_dir},
                                   {"resume_from", &m.resume_from}})
    if (!value->empty()) j[key] = *value;
  return j.dump(2) + "\n";
}

Result<Manifest> manifest_from_json(std::string_view text, const std::string& where) {
  try {
    const auto j = json::parse(text);
    Manifest m;
    m.chain_id = j.at("chain_id").get<std::string>();
    m.created = j.value("created", "");
    const auto state = j.value("state", "");
    const auto parsed = parse_manifest_state(state);
    if (!parsed)
      return fail(fmt::format("not a trnslurm manifest: unknown state '{}'", state), where,
                  "the run directory was written by another program or damaged");
    m.state = *parsed;
    m.run_dir = j.at("run_dir").get<std::string>();
    m.checkpoint_dir = j.value("checkpoint_dir", "");
    m.converted_dir = j.value("converted_dir", "");
    m.export_dir = j.value("export_dir", "");
    m.resume_from = j.value("resume_from", "");
    for (const auto& s : j.at("stages")) {
      StageRecord r;
      r.name = s.at("name").get<std::string>();
      if (s.contains("job_id") && !s["job_id"].is_null()) r.job_id = s["job_id"].get<JobId>();
      r.sbatch_argv = s.value("sbatch_argv", std::vector<std::string>{});
      r.last_state = s.value("last_state", "");
      r.last_exit_code = s.value("last_exit_code", "");
      r.last_reason = s.value("last_reason", "");
      r.last_elapsed = s.value("last_elapsed", "");
      r.last_nodes = s.value("last_nodes", "");
      m.stages.push_back(std::move(r));
    }
    if (!is_chain_id(m.chain_id)) return fail(fmt::format("bad chain id '{}'", m.chain_id), where);
    return m;
  } catch (const json::exception& e) {
    return fail(fmt::format("not a trnslurm manifest: {}", e.what()), where,
                "the run directory was written by another program or damaged");
  }
}

std::vector<StageRef> stage_refs(const Manifest& m) {
  std::vector<StageRef> out;
  out.reserve(m.stages.size());
  const auto records = read_outcomes(m.run_dir);
  for (const auto& s : m.stages) {
    StageRef ref{s.name,        s.job_id,       s.last_state, s.last_exit_code,
                 s.last_reason, s.last_elapsed, s.last_nodes, {}};
    std::copy_if(records.begin(), records.end(), std::back_inserter(ref.outcomes),
                 [&](const OutcomeRecord& r) { return r.stage == s.name; });
    out.push_back(std::move(ref));
  }
  return out;
}

Result<fs::path> create_run_dir(const fs::path& runs_dir, std::string_view chain_id) {
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  if (ec) return fail(fmt::format("cannot create the runs directory: {}", ec.message()), runs_dir.string());
  const auto dir = fs::absolute(runs_dir / std::string(chain_id));
  // mkdir fails with EEXIST rather than sharing a directory with another submit.
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return fail(fmt::format("cannot create the run directory: {}", std::strerror(errno)), dir.string(),
                "chain ids are unique; retry the submit");
  }
  for (const auto* sub : {"logs", "outcomes"}) {
    fs::create_directory(dir / sub, ec);
    if (ec)
      return fail(fmt::format("cannot create the {} directory: {}", sub, ec.message()), (dir / sub).string());
  }
  return dir;
}

Result<void> write_manifest(const Manifest& m) {
  return write_file_atomic(m.run_dir / "manifest.json", manifest_to_json(m));
}

Result<Manifest> read_manifest(const fs::path& run_dir) {
  const auto path = run_dir / "manifest.json";
  // A manifest is a few KiB, its journal a line per job and state change.
  const auto text =
      read_file_or_fail(path, std::size_t{16} << 20, "the manifest", "is this a trnslurm run directory?");
  if (!text) return std::unexpected(text.error());
  auto m = manifest_from_json(*text, path.string());
  if (!m) return m;
  const auto journal_path = run_dir / "journal";
  std::error_code ec;
  if (fs::symlink_status(journal_path, ec).type() != fs::file_type::not_found) {
    const auto journal = read_file_or_fail(journal_path, std::size_t{16} << 20, "the run's journal");
    if (!journal) return std::unexpected(journal.error());
    apply_journal(*m, *journal);
  }
  return m;
}

Result<void> record_job(const fs::path& run_dir, std::string_view stage, JobId id) {
  return append_line(run_dir / "journal", fmt::format("job {} {}\n", stage, id), "the journal");
}

Result<void> record_state(const fs::path& run_dir, ManifestState state) {
  return append_line(run_dir / "journal", fmt::format("state {}\n", to_string(state)), "the journal");
}

void apply_journal(Manifest& m, std::string_view journal) {
  while (!journal.empty()) {
    const auto nl = journal.find('\n');
    if (nl == std::string_view::npos) break;  // a torn last line
    std::istringstream line{std::string(journal.substr(0, nl))};
    journal.remove_prefix(nl + 1);
    std::string kind;
    line >> kind;
    if (kind == "job") {
      std::string stage;
      JobId id = 0;
      if (!(line >> stage >> id) || id == 0) continue;
      for (auto& s : m.stages) {
        if (s.name == stage) s.job_id = id;
      }
    } else if (kind == "state") {
      std::string state;
      if (line >> state) {
        if (const auto parsed = parse_manifest_state(state)) m.state = *parsed;
      }
    }
  }
  // The manifest was written before the ids existed: its dependencies say afterok:0.
  for (std::size_t k = 1; k < m.stages.size(); ++k) {
    if (!m.stages[k - 1].job_id) continue;
    for (auto& arg : m.stages[k].sbatch_argv) {
      if (arg == "--dependency=afterok:0")
        arg = fmt::format("--dependency=afterok:{}", *m.stages[k - 1].job_id);
    }
  }
}

Result<SubmitLock> lock_submission(const fs::path& run_dir) {
  // A file system without flock (some FUSE mounts) does not stop the submit:
  // submission_in_progress then goes by the journal's age.
  auto lock = FileLock::acquire(run_dir / "submit.lock", FileLock::Wait::no, "the submit lock");
  if (!lock && FileLock::busy(lock.error()))
    return fail("another submit holds this run directory", lock.error().where,
                "chain ids are unique; retry the submit");
  return lock;
}

bool submission_in_progress(const fs::path& run_dir) {
  const auto path = run_dir / "submit.lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return false;
  const int rc = ::flock(fd, LOCK_SH | LOCK_NB);
  const int err = errno;
  ::close(fd);
  if (rc == 0) return false;
  if (err == EWOULDBLOCK) return true;
  // No flock here: a submit takes seconds, so one whose journal has not moved for ten minutes
  // is gone.
  std::error_code ec;
  const auto changed = fs::last_write_time(run_dir / "journal", ec);
  return !ec && fs::file_time_type::clock::now() - changed < std::chrono::minutes(10);
}

std::vector<fs::path> list_run_dirs(const fs::path& runs_dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(runs_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory() && fs::exists(it->path() / "manifest.json") &&
        is_chain_id(it->path().filename().string()))
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<fs::path> find_run_dir(const fs::path& runs_dir, std::string_view chain) {
  if (chain.empty()) {
    auto dirs = list_run_dirs(runs_dir);
    if (dirs.empty()) {
      return fail("no chain here", runs_dir.string(),
                  "submit one with 'trnslurm submit', or give --runs-dir or a chain id");
    }
    return dirs.back();
  }
  if (!is_chain_id(chain)) {
    return fail(fmt::format("'{}' is not a chain id", chain), "command line",
                "chain ids look like 20261122-004336-123-1a2b3c4d ('trnslurm list' shows them)");
  }
  const auto dir = runs_dir / std::string(chain);
  if (!fs::exists(dir / "manifest.json")) {
    return fail(fmt::format("no run directory for chain '{}'", chain), runs_dir.string(),
                "'trnslurm list' shows the chains of this directory");
  }
  return dir;
}

}  // namespace trnslurm
