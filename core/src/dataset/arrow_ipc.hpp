#pragma once

// Counting the rows of one Arrow IPC file, stream format (what datasets' save_to_disk writes) or
// file format (ARROW1 magic and footer), from its metadata only: bodies are skipped by offset and
// read only by --verify, and then only the token column's offsets buffer. Internal.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "arrow_schema.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm::dataset {

class ReadOnlyFile;

struct ArrowOptions {
  std::string_view token_column = "input_ids";
  bool verify = false;                   // read the token offsets of every record batch
  std::optional<std::uint64_t> seq_len;  // with verify: every row must hold exactly seq_len tokens
};

struct ArrowFileCount {
  bool file_format = false;  // ARROW1 file (true) or stream (false)
  std::uint64_t rows = 0;    // sum of RecordBatch.length
  std::uint64_t batches = 0;
  TokenLayout layout;  // the token column as the schema declares it
  // Sum over the record batches of the token column's values node length (from the metadata):
  // the tokens of a List column as every writer lays them out; exact after verify.
  std::uint64_t token_values = 0;
  std::optional<std::uint64_t> verified_tokens;  // verify: sum of row lengths from the offsets
};

// Largest metadata (one Message or the Footer) accepted: real ones are kilobytes.
inline constexpr std::uint64_t max_arrow_metadata = 16u << 20;

Result<ArrowFileCount> count_arrow(const std::filesystem::path& path, const ArrowOptions& options);
// The same for an opened file.
Result<ArrowFileCount> count_arrow(const ReadOnlyFile& file, const ArrowOptions& options);

}  // namespace trnslurm::dataset
