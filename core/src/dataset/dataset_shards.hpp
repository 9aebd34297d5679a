#pragma once

// Totals over the Arrow files of one dataset (a save_to_disk directory's shards, or one .arrow
// file): every shard must declare the token column the same way, and the warnings about tokens
// are given once for the dataset, not once per shard. Internal.

#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "arrow_ipc.hpp"
#include "dataset_file.hpp"
#include "trnslurm/dataset/dataset.hpp"

namespace trnslurm::dataset {

class ArrowShards {
 public:
  explicit ArrowShards(const DatasetRequest& request);

  Result<void> add(const std::filesystem::path& file);
  // Files of an open directory `dir` (whose path is `path`, for errors), by name: up to
  // request.readers of them open and read at once, the counts added in the order of `names`, so
  // the error reported is the first listed file's, whatever the order the reads finished in.
  Result<void> add_all(const Directory& dir, const std::filesystem::path& path,
                       std::span<const std::string> names);

  std::uint64_t rows() const { return rows_; }
  std::uint64_t files() const { return files_; }
  // Fills rows, tokens, files and the token warnings of out.
  Result<void> finish(DatasetCount& out) const;

 private:
  Result<void> add(const std::filesystem::path& file, const ArrowFileCount& count);
  const DatasetRequest& request_;
  ArrowOptions options_;
  std::optional<TokenLayout> layout_;
  std::filesystem::path first_file_;
  std::uint64_t rows_ = 0;
  std::uint64_t files_ = 0;
  std::uint64_t token_values_ = 0;
  std::optional<std::uint64_t> verified_tokens_;
};

}  // namespace trnslurm::dataset
