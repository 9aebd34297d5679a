#pragma once
// Where one chain writes its checkpoints, converted and exported weights (docs/recipe.md,
// "Checkpoints of a chain"): a directory of its own under each of the recipe's, so that two
// chains of one recipe never resume from or overwrite each other's; the mark each directory
// carries of the chain writing it; and `submit --resume-from`, which starts a chain from another
// one's newest checkpoint, explicitly.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "trnslurm/chain/slurm_client.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

struct ChainDirs {
  std::string checkpoint;  // {{checkpoint_dir}}
  std::string converted;   // {{converted_dir}}
  std::string exported;    // {{export_dir}}
};

// checkpoint.dir, converted_dir and export_dir each with the chain id as a last component, or as
// written when checkpoint.per_chain is false (every chain of the recipe then shares them).
// Per chain under the recipe's directories rather than under the run directory: checkpoints go
// where the recipe puts them (a large shared file system), never into a small home directory
// because that is where the recipe and its runs/ live.
ChainDirs chain_dirs(const CheckpointRecipe& checkpoint, std::string_view chain_id);

// The plan's JSON with the chain's directories as checkpoint_dir, converted_dir and export_dir:
// what the job scripts' placeholders, the TRNSLURM_* exports and the run's plan.json then hold.
nlohmann::json with_chain_dirs(nlohmann::json plan, const ChainDirs& dirs);

// A path on a file system, not a URL (s3://...): only those are marked and checked.
bool is_local_dir(std::string_view dir);

// The mark a submitted chain leaves in each directory it writes: <dir>/.trnslurm-chain, JSON.
inline constexpr std::string_view owner_file_name = ".trnslurm-chain";
struct DirOwner {
  std::string chain_id;
  std::filesystem::path run_dir;
};
// nullopt when the directory carries no (readable) mark.
std::optional<DirOwner> read_dir_owner(const std::filesystem::path& dir);
// Creates the directory if needed and writes the mark (atomically).
Result<void> mark_dir_owner(const std::filesystem::path& dir, const DirOwner& owner);

// Whether the chain of a run directory still has a job queued (pending, running or held) or a
// submit in progress. When the run directory is gone, Slurm is asked by the chain's job names.
Result<bool> chain_is_live(const DirOwner& owner, SlurmClient& slurm);

// Refuses `dir` (`what` names it in the message) when `owner`'s chain is live.
Result<void> check_owner_not_live(const DirOwner& owner, const std::filesystem::path& dir,
                                  std::string_view what, SlurmClient& slurm);
// Refuses `dir` when a chain other than `chain_id` marked it and is live: two chains would write
// the same checkpoints, or one would resume from checkpoints the other is still writing and pruning.
Result<void> check_dir_not_in_use(const std::filesystem::path& dir, std::string_view chain_id,
                                  std::string_view what, SlurmClient& slurm);

// What `--resume-from` named: a chain id under the runs directory, a run directory, or a
// checkpoint directory; the checkpoint directory it stands for and its newest completed step.
// Refused: a name that is none of these, a directory a live chain writes (check_owner_not_live),
// a URL, a directory without a completed checkpoint.
struct ResumeSource {
  std::filesystem::path checkpoint_dir;
  std::optional<DirOwner> chain;  // the chain whose directory it is, when one is known
  std::uint64_t step = 0;         // its newest step_<n> with done, when submitting
};
Result<ResumeSource> find_resume_source(const std::filesystem::path& runs_dir, std::string_view given,
                                        SlurmClient& slurm);

// A shell pipeline printing the name of the newest complete step under `<dir>`, `step_<n>` (with
// `done`) or `step-<n>` (with `.metadata`), the highest n (nothing when there is none);
// `dir_placeholder` is the template placeholder of the directory, e.g. "{{checkpoint_dir}}".
std::string newest_step_pipeline(std::string_view dir_placeholder);

// What every stage after convert runs first in a chain submitted with --resume-from (a template
// of {{checkpoint_dir}} and {{resume_from}}): while the chain's checkpoint directory holds no
// completed checkpoint, the source's newest step_<n> is hard-linked into it (copied across file
// systems), so that the trainer's latest_if_exists and {{newest_checkpoint}} find it there.
std::string resume_prologue();

}  // namespace trnslurm
