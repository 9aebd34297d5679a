#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// Counting a training dataset without reading it: the plan needs rows (or tokens), and a dataset
// is often tens of thousands of shards of gigabytes each. Only headers and metadata are read;
// record batch bodies are skipped by seeking. See docs/datasets.md for the formats and checks.

enum class DatasetFormat {
  automatic,   // detect from the path (only ever a request, never a result)
  hf,          // Hugging Face save_to_disk directory (state.json + Arrow stream shards, or dataset.arrow)
  hf_dict,     // Hugging Face DatasetDict directory (dataset_dict.json + one directory per split)
  megatron,    // Megatron / NeMo indexed dataset: prefix.idx (MMIDIDX) + prefix.bin
  arrow_file,  // one .arrow file, Arrow IPC file format (ARROW1) or stream format
};

struct DatasetRequest {
  std::filesystem::path path{};  // HF save_to_disk dir, DatasetDict dir, .arrow file, or Megatron prefix/.idx
  DatasetFormat format = DatasetFormat::automatic;
  std::string split = "train";             // for hf_dict
  bool verify = false;                     // full pass over the token offsets (--verify)
  std::optional<std::uint64_t> seq_len{};  // to check rows hold seq_len tokens where the schema says so
  std::string token_column = "input_ids";  // Arrow: the column holding each row's tokens
  // Shards open and read at once. On a shared file system (where datasets live) every open and
  // read waits a network round trip: 16 at once cut 10,000 shards' waits 16-fold
  // (bench/dataset-count --latency); on a local disk they cost next to nothing.
  unsigned readers = 16;
};

struct DatasetCount {
  DatasetFormat format = DatasetFormat::automatic;  // what was detected
  std::uint64_t rows = 0;  // HF/Arrow: rows (samples). Megatron: sequences (documents' sequences)
  std::optional<std::uint64_t> tokens{};  // Megatron: sum of sizes; Arrow: when derivable
  std::uint64_t files = 0;                // shards / files read
  std::vector<std::string> warnings{};    // e.g. stale dataset_info.json counts
};

// Errors name the file and the byte offset in Error::where ("path:offset N"). Hostile or broken
// input gives an Error: never a crash, a hang or an allocation beyond a fixed cap.
Result<DatasetCount> count_dataset(const DatasetRequest& request);

// The names a recipe's dataset.format may hold: "auto", "hf", "hf-dict", "megatron", "arrow".
const std::vector<std::string>& dataset_format_names();
std::optional<DatasetFormat> parse_dataset_format(std::string_view name);
std::string_view to_string(DatasetFormat format);

}  // namespace trnslurm
