// From the dataset reader's count (contract 1) to the samples the plan divides.
#include <fmt/format.h>

#include "trnslurm/plan/plan.hpp"

namespace trnslurm {

Result<DatasetSize> dataset_size(const DatasetCount& count, std::uint64_t seq_len) {
  DatasetSize size;
  if (count.format == DatasetFormat::megatron) {
    if (!count.tokens)
      return fail("the Megatron dataset's token count is unknown", "dataset", "check the .idx file");
    auto s = dataset_size_from_tokens(*count.tokens, seq_len);
    if (!s) return s;
    size = *s;
    size.format = "megatron";
  } else {
    size.samples = count.rows;
    size.tokens = count.tokens;
  }
  if (count.format != DatasetFormat::megatron) size.format = std::string(to_string(count.format));
  size.files = count.files;
  size.warnings = count.warnings;
  return size;
}

Result<DatasetSize> count_recipe_dataset(const Recipe& recipe, bool verify) {
  if (recipe.dataset.path.empty())
    return fail(
        "no dataset: dataset.path is empty", recipe.where("dataset.path"),
        "set dataset.path in the recipe, or give --dataset PATH (or --samples N to plan without one)");
  const auto format = parse_dataset_format(recipe.dataset.format);
  if (!format)
    return fail(fmt::format("unknown dataset format '{}'", recipe.dataset.format),
                recipe.where("dataset.format"),
                fmt::format("use one of: {}", fmt::join(dataset_format_names(), ", ")));
  DatasetRequest request;
  request.path = recipe.dataset.path;
  request.format = *format;
  request.split = recipe.dataset.split;
  request.verify = verify;
  request.seq_len = recipe.model.seq_len;
  auto count = count_dataset(request);
  if (!count) return std::unexpected(count.error());
  return dataset_size(*count, recipe.model.seq_len);
}

}  // namespace trnslurm
