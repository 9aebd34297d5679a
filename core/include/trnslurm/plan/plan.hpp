#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/dataset/dataset.hpp"
#include "trnslurm/plan/placement.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

// What the plan needs from the dataset: samples (sequences) in the training split, and tokens
// when known. The dataset reader (dataset.hpp) produces it; tests give it directly.
struct DatasetSize {
  std::uint64_t samples = 0;
  std::optional<std::uint64_t> tokens;
  // "hf", "megatron", ... or "given" for counts from the command line; for text read by the
  // trainer's tokenizer: "stated" (dataset.tokens), "counted" (the token-count job's cache) or
  // "estimate" (not a count: `basis` says what it rests on).
  std::string format;
  std::string basis;  // how the tokens were obtained, for the plan's explanation
  std::string
      token_count_file;  // text: where the token-count stage writes the count ("" without a tokenizer)
  std::uint64_t files = 0;
  std::vector<std::string> warnings;  // from the dataset reader
};

// Megatron/NeMo mmap datasets: samples per epoch = (tokens - 1) // seq_len (Megatron-LM's gpt_dataset.py).
Result<DatasetSize> dataset_size_from_tokens(std::uint64_t tokens, std::uint64_t seq_len);
// TorchTitan's text datasets: samples per epoch = tokens // (seq_len + 1) (plan_torchtitan.cpp).
Result<DatasetSize> text_dataset_size(std::uint64_t tokens, std::uint64_t seq_len);

// Samples for the plan from a dataset count: HF and Arrow rows; Megatron (tokens - 1) // seq_len.
Result<DatasetSize> dataset_size(const DatasetCount& count, std::uint64_t seq_len);

// Counts the recipe's dataset (dataset.path, format, split; header-only unless `verify`); for
// format "text", its tokens: stated, counted (token_count.hpp) or estimated, labelled.
Result<DatasetSize> count_recipe_dataset(const Recipe& recipe, bool verify = false);

// Memory per NeuronCore, in bytes (docs/plan.md gives the formula and its sources).
struct MemoryEstimate {
  std::uint64_t parameters = 0;           // whole model
  std::uint64_t parameters_per_core = 0;  // after TP and PP sharding (kv heads replicated when TP > kv)
  std::uint64_t weights = 0;              // bf16
  std::uint64_t gradients = 0;            // bf16
  std::uint64_t optimizer = 0;            // fp32 master + Adam m and v, ZeRO-1 sharded over DP
  std::uint64_t activations = 0;          // sequence parallel + selective recompute
  std::uint64_t buffers = 0;              // FSDP: the unsharded layers being gathered and reduced
  std::uint64_t total = 0;
  std::uint64_t sharded_over = 1;  // the ranks the optimizer state (ZeRO-1) or all state (FSDP) is split over
  bool fsdp = false;               // weights and gradients sharded too (TorchTitan's FSDP2)
  std::uint64_t capacity = 0;      // device memory per core; 0 = unknown (cpu)
  bool fits() const { return capacity == 0 || total <= capacity; }
};

struct CostEstimate {
  double tokens_per_second_per_node = 0;  // the rate the estimate assumes
  double price_per_node_hour = 0;         // 0 = no cost
  std::string rate_from = "recipe";       // "recipe" ([estimate]), or "run <chain>" (measured)
  double tokens = 0;                      // tokens trained: total_steps x gbs x seq_len
  double hours = 0;                       // wall time at the recipe's throughput
  double node_hours = 0;
  std::optional<double> cost;  // when the recipe gives price_per_node_hour
  std::optional<double> mfu;   // that throughput against the instance's peak dense BF16
};

// The fastest a step can be: 6 x parameters x tokens per step at the instance's peak dense
// BF16 rate (the instance table's bf16_tflops_per_device), every device busy.
struct StepTimeFloor {
  double seconds = 0;
  double flops_per_step = 0;
  double peak_flops = 0;  // of the whole job
};

// One parallel configuration: what make_plan reads from [cluster] and [train], and what
// `plan --suggest` enumerates.
struct ParallelConfig {
  std::uint32_t nodes = 0;
  std::uint32_t cores_per_node = 0;
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint64_t gbs = 0;
  std::uint64_t mbs = 1;
  std::uint32_t epochs = 1;
  std::uint32_t cp = 1;            // TorchTitan
  std::uint32_t dp_replicate = 1;  // TorchTitan: dp_shard = dp / dp_replicate
  Recompute ac = Recompute::selective;
};

// What a configuration gives, counted as the training loop counts it (docs/plan.md, "Steps").
struct PlanSteps {
  std::uint64_t world_size = 0;
  std::uint64_t dp = 0;
  std::uint64_t dp_shard = 0;  // TorchTitan: FSDP degree (dp / dp_replicate); NxD: dp
  std::uint64_t grad_accum = 0;
  std::uint64_t samples_per_rank = 0;
  std::uint64_t micro_steps_per_epoch = 0;
  std::uint64_t steps_per_epoch = 0;
  std::uint64_t total_steps = 0;
};

struct Plan {
  // inputs
  Trainer trainer = Trainer::nxd;
  std::string instance;
  std::string instance_origin;  // bundled, site, recipe
  std::string backend;          // the instance's target: trn1, trn2, trn3, cpu
  std::uint32_t nodes = 0;
  std::uint32_t cores_per_node = 0;
  std::uint32_t lnc = 1;
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint32_t cp = 1;
  std::uint32_t dp_replicate = 1;
  Recompute ac = Recompute::selective;
  std::uint64_t gbs = 0;
  std::uint64_t mbs = 0;
  std::uint64_t seq_len = 0;
  std::uint32_t epochs = 1;
  DatasetSize dataset;
  // derived
  std::uint64_t world_size = 0;
  std::uint64_t dp = 0;
  std::uint64_t dp_shard = 0;
  std::uint64_t grad_accum = 0;
  std::uint64_t samples_per_rank = 0;       // floor(N / DP)
  std::uint64_t micro_steps_per_epoch = 0;  // floor(samples_per_rank / MBS)
  std::uint64_t steps_per_epoch = 0;        // floor(micro / ACC)
  std::uint64_t total_steps = 0;            // floor(E x micro / ACC)
  std::uint64_t warmup_steps = 0;
  std::string warmup_rule;                   // how warmup_steps was obtained
  std::optional<std::uint64_t> decay_steps;  // TorchTitan: steps of the LR decay; nullopt for NxD
  std::string decay_rule;
  std::uint64_t samples_dropped_per_epoch = 0;  // never reach an optimizer step in epoch 1
  std::uint64_t kv_size_multiplier = 1;         // TP / kv_heads when TP > kv_heads
  std::uint64_t checkpoint_every = 0;           // effective (0 in the recipe = total_steps)
  MemoryEstimate memory;
  std::optional<StepTimeFloor> step_floor;
  std::optional<CostEstimate> cost;
  Placement placement;  // UltraServer types: what keeps each TP x PP group in one UltraServer
  std::vector<std::string> warnings;
  // The recipe values stage templates use (model shape, paths, lr...), copied by make_plan so
  // that to_json(plan) alone gives every placeholder.
  nlohmann::json recipe_values = nlohmann::json::object();
};

// Wall time, node-hours, cost and MFU of a plan at a throughput (docs/plan.md).
CostEstimate estimate_cost(const Plan& plan, double tokens_per_second_per_node, double price_per_node_hour);

// The arithmetic of docs/plan.md with the instance's figures from recipe.instances: refuses what the training
// loop would reject or silently truncate, with the nearest valid values as the hint.
Result<Plan> make_plan(const Recipe& recipe, const DatasetSize& dataset);

// The parameters of the whole model and of one TP rank of the busiest pipeline stage (q/o and
// the MLP split over TP; ceil(kv / tp) kv heads per rank; the vocabulary-parallel embedding and
// head on the first and last stage, both when PP = 1).
struct ParameterCount {
  std::uint64_t total = 0;
  std::uint64_t per_core = 0;
  std::uint64_t per_layer_per_core = 0;
};
ParameterCount count_parameters(const ModelRecipe& model, std::uint32_t tp, std::uint32_t pp);

// NxD's memory per core (plan_nxd.cpp): bf16 weights and gradients on every DP rank, the
// optimizer state ZeRO-1 sharded over DP, selective recompute.
MemoryEstimate estimate_memory(const ModelRecipe& model, std::uint32_t tp, std::uint32_t pp, std::uint64_t dp,
                               std::uint64_t mbs, std::uint64_t grad_accum, std::uint64_t capacity);
// TorchTitan's (plan_torchtitan.cpp): FSDP2 shards fp32 weights, fp32 gradients and the Adam
// state over dp_shard x cp; one layer's bf16 weights and gradients are gathered at a time.
MemoryEstimate estimate_memory_fsdp(const ModelRecipe& model, const ParallelConfig& config,
                                    const PlanSteps& steps, std::uint64_t capacity);

// Activations kept per core (docs/plan.md, "Memory"): Korthikanti et al. 2022, Table 2, per
// layer with tensor and sequence parallelism, for the recompute mode; `in_flight` micro-batches
// (1F1B keeps up to PP); the fp32 logits of the loss.
std::uint64_t activation_bytes(const ModelRecipe& model, std::uint32_t tp, std::uint32_t pp, std::uint32_t cp,
                               std::uint64_t mbs, std::uint64_t in_flight, Recompute ac);

// Every input and result; also the recipe values that stage templates use ({{key}} placeholders,
// docs/recipe.md). Keys are stable: the chain renders templates from them.
nlohmann::json to_json(const Plan& plan);
// The `memory` object of the plan's JSON (and of each suggestion's).
nlohmann::json to_json(const MemoryEstimate& memory);

// One line of `trnslurm plan`: the figure, its value, and what it was computed from.
struct PlanLine {
  std::string name;
  std::string value;
  std::string from;
};
std::vector<PlanLine> explain(const Plan& plan);

// "17.2 GiB"
std::string format_bytes(std::uint64_t bytes);
// "0.42 s", "3.1 min", "2.5 h"
std::string format_seconds(double seconds);

}  // namespace trnslurm
