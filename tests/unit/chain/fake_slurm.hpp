#pragma once
// A SlurmClient in memory, for the chain logic's unit tests: jobs get ids from 100, sbatch can
// be made to fail at a given call, scancel marks jobs CANCELLED.
#include <algorithm>
#include <map>

#include "trnslurm/chain/slurm_client.hpp"

namespace trnslurm::test {

class FakeSlurm : public SlurmClient {
 public:
  std::map<JobId, JobRow> jobs;
  std::vector<std::vector<std::string>> sbatch_calls;
  std::vector<JobId> cancelled;
  int fail_at_call = -1;  // 0-based sbatch call that fails
  std::string fail_message = "sbatch: error: invalid partition specified: nope";
  bool has_accounting = false;
  std::map<JobId, JobRow> accounting;
  int squeue_calls = 0;
  std::vector<JobId> asked;  // the ids of the last squeue call
  int cancel_delay = 0;      // squeue calls during which a cancelled job still shows RUNNING
  int scancel_failures = 0;  // scancel calls that fail (slurmctld not answering) before one works
  std::string squeue_error;  // when set, every squeue fails with it
  std::map<JobId, std::string> job_records;         // scontrol show job -o, by job; absent: gone
  std::string show_job_error;                       // when set, show_job fails with it (slurmctld down)
  std::map<std::string, std::string> node_records;  // scontrol show node -o, by node
  std::vector<JobId> requeued;
  std::string requeue_error;  // when set, requeue fails with it
  int exclude_refusals = 0;   // exclude_nodes calls refused (the job still ending) before one is taken
  std::vector<std::string> exclusions;  // the ExcNodeLists taken
  std::string version = "22.05.8";      // what slurmctld runs; "" = it cannot be reached

  Result<JobId> sbatch(const std::vector<std::string>& argv) override {
    sbatch_calls.push_back(argv);
    if (static_cast<int>(sbatch_calls.size()) - 1 == fail_at_call) return fail(fail_message, "sbatch");
    const JobId id = 100 + sbatch_calls.size() - 1;
    JobRow r;
    r.id = id;
    r.state = "PENDING";
    r.reason = "Dependency";
    for (const auto& a : argv) {
      if (a.starts_with("--job-name=")) r.name = a.substr(11);
      if (a.starts_with("--comment=")) r.comment = a.substr(10);
    }
    jobs[id] = r;
    return id;
  }
  Result<void> scancel(const std::vector<JobId>& ids) override {
    if (scancel_failures > 0) {
      --scancel_failures;
      return fail("scancel: error: Unable to contact slurm controller (connect failure)", "scancel");
    }
    for (auto id : ids) {
      cancelled.push_back(id);
      if (auto it = jobs.find(id);
          it != jobs.end() && it->second.state != "COMPLETED" && it->second.state != "FAILED") {
        it->second.state = cancel_delay > 0 ? "COMPLETING" : "CANCELLED";
      }
    }
    return {};
  }
  Result<std::vector<JobRow>> squeue(const std::vector<JobId>& ids) override {
    ++squeue_calls;
    asked = ids;
    if (!squeue_error.empty()) return fail(squeue_error, "squeue");
    if (cancel_delay > 0 && --cancel_delay == 0) {
      for (auto& [id, r] : jobs) {
        if (r.state == "COMPLETING") r.state = "CANCELLED";
      }
    }
    std::vector<JobRow> out;
    for (auto id : ids) {
      if (auto it = jobs.find(id); it != jobs.end()) out.push_back(it->second);
    }
    return out;
  }
  Result<std::vector<JobRow>> squeue_by_name(const std::vector<std::string>& names) override {
    std::vector<JobRow> out;
    for (const auto& [id, r] : jobs) {
      if (std::find(names.begin(), names.end(), r.name) != names.end()) out.push_back(r);
    }
    return out;
  }
  Result<std::optional<std::vector<JobRow>>> sacct(const std::vector<JobId>& ids) override {
    if (!has_accounting) return std::optional<std::vector<JobRow>>{};
    std::vector<JobRow> out;
    for (auto id : ids) {
      if (auto it = accounting.find(id); it != accounting.end()) out.push_back(it->second);
    }
    return std::optional<std::vector<JobRow>>{out};
  }
  Result<std::optional<std::string>> show_job(JobId id) override {
    if (!show_job_error.empty()) return fail(show_job_error, "scontrol show job");
    if (auto it = job_records.find(id); it != job_records.end())
      return std::optional<std::string>(it->second);
    return std::optional<std::string>();
  }
  Result<std::string> show_node(const std::string& node) override {
    if (auto it = node_records.find(node); it != node_records.end()) return it->second;
    return fail("Node " + node + " not found", "scontrol show node");
  }
  Result<void> requeue(JobId id) override {
    if (!requeue_error.empty()) return fail(requeue_error, "scontrol requeue");
    requeued.push_back(id);
    return {};
  }
  Result<void> exclude_nodes(JobId, const std::string& node_list) override {
    if (exclude_refusals > 0) {
      --exclude_refusals;
      return fail("scontrol: error: Job is no longer pending execution", "scontrol update");
    }
    exclusions.push_back(node_list);
    return {};
  }
  Result<std::string> controller_version() override {
    if (version.empty())
      return fail("slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)",
                  "scontrol show config");
    return version;
  }
  void set(JobId id, std::string state, std::string reason = "None", std::string exit_code = "0") {
    auto& r = jobs[id];
    r.id = id;
    r.state = std::move(state);
    r.reason = std::move(reason);
    r.exit_code = std::move(exit_code);
  }
};

}  // namespace trnslurm::test
