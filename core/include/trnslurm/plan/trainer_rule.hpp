#pragma once
// One trainer's data and batch rule (docs/plan.md, "Tracks"): how its training loop turns a
// dataset and a parallel configuration into optimizer steps, what its own code (and its
// converters) refuse, how its LR schedule counts warmup and decay, and what a core holds.
// neuronx-distributed's rule (plan_nxd.cpp) and TorchTitan's (plan_torchtitan.cpp) sit side by
// side behind this interface; make_plan and `plan --suggest` call the recipe's.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

class TrainerRule {
 public:
  TrainerRule() = default;
  TrainerRule(const TrainerRule&) = delete;
  TrainerRule& operator=(const TrainerRule&) = delete;
  virtual ~TrainerRule() = default;

  // The samples (sequences) one epoch of `tokens` tokens makes for this trainer's data loader.
  virtual Result<DatasetSize> from_tokens(std::uint64_t tokens, std::uint64_t seq_len) const = 0;

  // A configuration counted as the training loop counts it; refuses what the trainer would
  // reject or silently truncate, with the nearest valid values as the hint. Error::where names
  // the recipe key at fault ("train.tp", "cluster.nodes", "train.gbs", ...); `instance` names the
  // type in messages.
  virtual Result<PlanSteps> steps(const ParallelConfig& config, const ModelRecipe& model,
                                  std::uint64_t samples, std::string_view instance) const = 0;

  // What the recipe's other upstream programs refuse at this configuration (a converter that
  // cannot shard it): refused before anything is queued. `backend` is the instance's target.
  virtual Result<void> check_programs(const ParallelConfig& config, const Recipe& recipe,
                                      std::string_view backend) const = 0;

  virtual MemoryEstimate memory(const ModelRecipe& model, const ParallelConfig& config,
                                const PlanSteps& steps, std::uint64_t capacity) const = 0;

  // Warmup and decay as the trainer's LR schedule counts them, and this trainer's warnings.
  virtual void schedule(const Recipe& recipe, Plan& plan) const = 0;
  virtual void annotate(const Recipe& recipe, Plan& plan) const = 0;

  // The plan's lines for the dataset, the parallelism and the steps, each with its formula.
  virtual void explain(const Plan& plan, std::vector<PlanLine>& lines) const = 0;
};

// The recipe's rule, and each of the two.
const TrainerRule& trainer_rule(Trainer trainer);
const TrainerRule& nxd_rule();
const TrainerRule& torchtitan_rule();

// Shared by both rules: the nearest multiples of `unit` around `value` ("768 or 1024") and the
// divisors of `n` that divide `heads` too, nearest to `wanted`; ceil(ratio x steps) with
// products that are integers up to rounding error taken as integers.
std::string nearest_multiples(std::uint64_t value, std::uint64_t unit);
std::string nearest_divisors(std::uint32_t wanted, std::uint32_t n, std::uint32_t heads);
std::uint64_t ceil_ratio(double ratio, std::uint64_t steps);
// Warmup as both trainers take it: train.warmup_steps, else ceil(warmup_ratio x the steps of one
// epoch); capped at total_steps with a warning ending in `capped_note`.
void plan_warmup(const TrainRecipe& train, Plan& plan, std::string_view capped_note);
// The steps of both trainers' loops, from `steps`' dp and grad_accum: each DP rank's
// floor(samples / DP) samples, floor(that / MBS) `batches` per epoch, an optimizer step every
// grad_accum of them, the count carrying across epochs; refused when it overflows or is 0.
Result<PlanSteps> epoch_steps(const ParallelConfig& config, std::uint64_t samples, PlanSteps steps,
                              std::string_view batches);

}  // namespace trnslurm
