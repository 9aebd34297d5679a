#pragma once
// `trnslurm plan --suggest`: every parallel configuration of a recipe's model, instance type,
// dataset and GBS that the plan's rules accept (the recipe's trainer rule), each with the plan's memory
// estimate and a step time from a stated model, ranked by time or cost to train the planned epochs. The
// model, its inputs and its limits: docs/plan.md, "Suggestions".

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/plan/plan.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

enum class RankBy { time, cost };
std::string_view to_string(RankBy by);
std::optional<RankBy> rank_by_named(std::string_view name);  // "time", "cost"

// The share of the peak dense BF16 rate the compute of a step reaches. An assumption: the one
// public measurement of a Llama model trained with NxD on Trainium that gives its MFU is 30.8 %
// (Llama2-7B, TP=8 DP=64 on 16 trn1.32xlarge, Neuron 2.15: aws-neuron/aws-neuron-sdk
// about-neuron/benchmarks/trn1/trn1_trn1n_nlp_data.csv at a3247f5b8c305f9b70a19993acb306122e736eec).
inline constexpr double default_efficiency = 0.30;

struct SuggestOptions {
  std::uint32_t nodes_max = 0;  // 0: the recipe's cluster.nodes
  std::uint64_t mbs_max = 4;
  RankBy by = RankBy::time;
  double efficiency = default_efficiency;
};

// Where a collective's bytes go: nowhere (a group of one), inside one device (its HBM), between
// the devices of a node (NeuronLink), between nodes (EFA).
enum class Link { none, device, neuronlink, efa };
std::string_view to_string(Link link);

// The step-time model's terms for one optimizer step, seconds (docs/plan.md, "Step time").
struct StepTime {
  double compute = 0;          // 6 x P x GBS x seq_len / (peak of the job x efficiency)
  double tp_comm = 0;          // TP all-gathers and reduce-scatters of the busiest stage
  double bubble = 0;           // pipeline fill and drain
  double bubble_fraction = 0;  // (PP - 1) / (micro-batches + PP - 1)
  double dp_allreduce = 0;     // gradients reduce-scattered, parameters all-gathered (ZeRO-1)
  double total = 0;
  Link tp_link = Link::none;
  double tp_bytes = 0;        // sent by one rank per step
  double tp_bytes_per_s = 0;  // one rank's share of that link
  Link dp_link = Link::none;
  double dp_bytes = 0;
  double dp_bytes_per_s = 0;
};

// How the kv heads are spread over TP: split evenly (kv % TP = 0), replicated evenly
// (TP % kv = 0, kv_size_multiplier), or neither (uneven: the plan warns).
enum class KvHeads { split, replicated, uneven };
std::string_view to_string(KvHeads kv);

struct Suggestion {
  ParallelConfig config;
  std::uint32_t lnc = 1;
  PlanSteps steps;
  KvHeads kv = KvHeads::split;
  MemoryEstimate memory;
  std::optional<StepTime> step;  // nullopt: a figure the model needs is unknown (no_estimate says which)
  std::string no_estimate;
  double hours = 0;  // total_steps x step time
  double node_hours = 0;
  std::optional<double> cost;  // node_hours x the recipe's price_per_node_hour
  std::size_t rank = 0;        // 1-based
};

// Configurations one rule refused: the recipe key the trainer rule names, how many, and one message.
struct Refusals {
  std::string key;
  std::size_t count = 0;
  std::string example;
};

struct SuggestResult {
  std::string model;
  std::string instance;
  std::uint64_t gbs = 0;
  std::uint64_t seq_len = 0;
  std::uint32_t epochs = 1;
  std::uint64_t samples = 0;
  SuggestOptions options;  // nodes_max resolved
  std::optional<double> price_per_node_hour;
  std::size_t considered = 0;
  std::vector<Refusals> refused;
  std::vector<Suggestion> ranked;  // every configuration the rules accept, best first
  // The recipe's own configuration, evaluated alike and ranked among them (recipe_rank: the
  // rank it has or would have), or why the rules refuse it.
  std::optional<Suggestion> recipe;
  std::size_t recipe_rank = 0;
  bool recipe_in_search = false;  // within nodes_max, mbs_max, the instance's LNCs, PP dividing the layers
  std::string recipe_refused;
  std::vector<std::string> notes;  // figures no public source confirms, a missing price
};

// Every configuration of nodes 1..nodes_max, each LNC the type accepts, TP dividing the cores of
// a node, PP dividing the layers and MBS 1..mbs_max, checked by the trainer rule (its training loop
// and its converters), ranked: fitting
// before not fitting, kv heads split or replicated evenly before uneven, estimated before not,
// then by hours (time) or node-hours (cost), then fewer nodes, less memory per core, smaller TP,
// PP, MBS and LNC.
Result<SuggestResult> suggest(const Recipe& recipe, const DatasetSize& dataset,
                              const SuggestOptions& options);

// The step-time model for one configuration (the suggestion's memory and steps already set);
// nullopt with `why` when the instance table lacks a figure it needs.
std::optional<StepTime> estimate_step_time(const InstanceType& instance, const ModelRecipe& model,
                                           const Suggestion& s, double efficiency, std::string& why);

// The first `top` suggestions, the recipe's own, what was refused, the model and its figures.
nlohmann::json to_json(const SuggestResult& result, std::size_t top);
nlohmann::json to_json(const Suggestion& s);

}  // namespace trnslurm
