#pragma once

// Hugging Face datasets on disk: a save_to_disk directory (state.json, Arrow stream shards,
// dataset_info.json) and a DatasetDict directory (dataset_dict.json, one such directory per split).
// Internal.

#include <filesystem>

#include "trnslurm/dataset/dataset.hpp"

namespace trnslurm::dataset {

Result<DatasetCount> count_hf(const std::filesystem::path& dir, const DatasetRequest& request);
Result<DatasetCount> count_hf_dict(const std::filesystem::path& dir, const DatasetRequest& request);

}  // namespace trnslurm::dataset
