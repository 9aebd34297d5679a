#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/recipe/stage_names.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

using JobId = std::uint64_t;

// Slurm settings shared by every stage of a chain.
struct SlurmSettings {
  std::string partition;  // "" = the cluster's default
  std::string account;
  std::string qos;
  bool exclusive = true;
  std::vector<std::string> sbatch_args;  // passed through, one argv element each
};

// One job of the chain, already rendered: its script is final text.
struct StageSpec {
  std::string name;
  std::string script;
  std::uint32_t nodes = 1;
  std::string time;                      // Slurm time limit; "" = the partition's default
  std::vector<std::string> sbatch_args;  // this stage only, after the chain's own
  // Jobs of other chains this one also waits for, as sbatch spells them: "afterany:123" (the
  // precompile of the same compile key another chain is running, docs/cache.md).
  std::vector<std::string> also_after;
};

// A chain as a value: everything `submit` needs, nothing it has to look up.
struct ChainSpec {
  std::string chain_id;
  std::filesystem::path run_dir;  // absolute
  SlurmSettings slurm;
  std::vector<StageSpec> stages;  // in submission order, each depending on the one before
};

// "YYYYMMDD-HHMMSS-mmm-xxxxxxxx" (UTC, milliseconds, 32 random bits): sorts by time, so the
// newest chain is the last one, and is unique even for submits in the same millisecond.
std::string make_chain_id(std::chrono::system_clock::time_point now, std::uint32_t random);
// Chain ids are [0-9A-Za-z-] only: they go into job names, comments and paths.
bool is_chain_id(std::string_view id);

std::string job_name(std::string_view chain_id, std::string_view stage);     // trn-<chain>-<stage>
std::string job_comment(std::string_view chain_id, std::string_view stage);  // trnslurm:<chain>:<stage>

// Where a stage's script and its Slurm output live in the run directory.
std::filesystem::path script_path(const ChainSpec& chain, std::size_t stage);
std::filesystem::path output_pattern(const std::filesystem::path& run_dir, std::string_view stage);
std::filesystem::path output_path(const std::filesystem::path& run_dir, std::string_view stage, JobId id);

// The full sbatch argv of stage `stage` ("sbatch" first), depending on `after` when given.
std::vector<std::string> sbatch_argv(const ChainSpec& chain, std::size_t stage, std::optional<JobId> after);

// Which stages run: --only S, or --from S and/or --until S (names as in stage_names).
struct StageSelection {
  std::string only;
  std::string from;
  std::string until;
};
// Keeps the selected stages of `stages` (in order); an unknown name or an empty result is an error.
Result<std::vector<StageSpec>> select_stages(std::vector<StageSpec> stages, const StageSelection& sel);

// `sbatch --parsable` output: "123" or "123;cluster".
Result<JobId> parse_job_id(std::string_view text);

}  // namespace trnslurm
