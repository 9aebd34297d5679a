#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/chain/chain.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/process.hpp"

namespace trnslurm {

// One job as squeue or sacct reports it.
struct JobRow {
  JobId id = 0;
  std::string state;  // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
  std::string reason;
  std::string elapsed;
  std::string nodes;  // node count
  std::string nodelist;
  std::string exit_code;  // "N" or "N:signal"; "" when unknown
  std::string name;
  std::string comment;
};

// What the chain logic needs from Slurm. The CLI's implementation runs the real commands
// (CommandSlurmClient below); unit tests use a fake.
class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  // Runs `argv` (an sbatch command line, "sbatch" first); the job id, or sbatch's own message.
  virtual Result<JobId> sbatch(const std::vector<std::string>& argv) = 0;
  virtual Result<void> scancel(const std::vector<JobId>& ids) = 0;
  // The jobs Slurm still knows among `ids` (finished ones included); forgotten ids are absent.
  virtual Result<std::vector<JobRow>> squeue(const std::vector<JobId>& ids) = 0;
  // The jobs named one of `names`, for when the local state is gone.
  virtual Result<std::vector<JobRow>> squeue_by_name(const std::vector<std::string>& names) = 0;
  // From accounting; std::nullopt when the cluster has no accounting.
  virtual Result<std::optional<std::vector<JobRow>>> sacct(const std::vector<JobId>& ids) = 0;
  // `scontrol show job -o` and `scontrol show node -o`: one record of Key=Value fields
  // (util/scontrol_record.hpp). A job Slurm no longer knows: std::nullopt.
  virtual Result<std::optional<std::string>> show_job(JobId id) = 0;
  virtual Result<std::string> show_node(const std::string& node) = 0;
  // `scontrol requeue`: the job ends (SIGTERM to its processes) and pends again.
  virtual Result<void> requeue(JobId id) = 0;
  // Sets the job's excluded nodes (ExcNodeList, comma-separated), which Slurm accepts only while
  // the job pends.
  virtual Result<void> exclude_nodes(JobId id, const std::string& node_list) = 0;
  // The version slurmctld runs ("22.05.8", from `scontrol show config`); an error when it cannot
  // be asked.
  virtual Result<std::string> controller_version() = 0;
};

// Runs an argv (never a shell string); an error only when it could not be run at all.
using CommandRunner = std::function<Result<ProcessOutput>(const std::vector<std::string>& argv)>;

// SlurmClient over the real commands, run by `runner`. Parsing lives here so it is unit-tested.
class CommandSlurmClient final : public SlurmClient {
 public:
  explicit CommandSlurmClient(CommandRunner runner) : run_(std::move(runner)) {}
  Result<JobId> sbatch(const std::vector<std::string>& argv) override;
  Result<void> scancel(const std::vector<JobId>& ids) override;
  Result<std::vector<JobRow>> squeue(const std::vector<JobId>& ids) override;
  Result<std::vector<JobRow>> squeue_by_name(const std::vector<std::string>& names) override;
  Result<std::optional<std::vector<JobRow>>> sacct(const std::vector<JobId>& ids) override;
  Result<std::optional<std::string>> show_job(JobId id) override;
  Result<std::string> show_node(const std::string& node) override;
  Result<void> requeue(JobId id) override;
  Result<void> exclude_nodes(JobId id, const std::string& node_list) override;
  Result<std::string> controller_version() override;

 private:
  // Runs scontrol with `args`; its stdout, or its stderr as the error.
  Result<std::string> scontrol(std::vector<std::string> args);
  CommandRunner run_;
};

// The squeue argv for `ids` (one call, finished jobs included, '|'-separated, comment last).
std::vector<std::string> squeue_argv(const std::vector<JobId>& ids);
// Parses that squeue's output; a comment may itself hold '|'.
Result<std::vector<JobRow>> parse_squeue(std::string_view text);
// Parses `sacct -n -X -P -o JobID,State,Reason,Elapsed,NNodes,NodeList,ExitCode,JobName,Comment`.
Result<std::vector<JobRow>> parse_sacct(std::string_view text);

// SLURM_VERSION's value in `scontrol show config`'s output (`SLURM_VERSION = 22.05.8`); nullopt
// when there is none.
std::optional<std::string> parse_config_version(std::string_view text);

// The node features of the cluster, for an UltraServer constraint given as a prefix
// (plan/placement.hpp): `sinfo -h -N -o %f` prints each node's comma-separated list.
std::vector<std::string> node_features_argv();
std::vector<std::string> parse_node_features(std::string_view text);

// "768" (a wait status, as squeue's exit_code prints it) -> "3"; "0:9" stays.
std::string exit_code_from_status(std::string_view raw);

}  // namespace trnslurm
