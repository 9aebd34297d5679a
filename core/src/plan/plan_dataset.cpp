// From the dataset reader's count (contract 1) to the samples the plan divides; for text the
// trainer tokenizes, from the stated, counted or estimated tokens (token_count.hpp).
#include <fmt/format.h>

#include "trnslurm/dataset/token_count.hpp"
#include "trnslurm/plan/plan.hpp"
#include "trnslurm/plan/trainer_rule.hpp"

namespace trnslurm {

namespace {

// The tokens of the recipe's text corpus: stated, else counted (the cache), else an estimate
// labelled as one. The samples follow by the trainer's rule.
Result<DatasetSize> count_text_dataset(const Recipe& recipe) {
  const auto& d = recipe.dataset;
  const auto& rule = trainer_rule(recipe.upstream.trainer);
  const auto sized = [&](std::uint64_t tokens, std::string format, std::string basis) -> Result<DatasetSize> {
    auto size = rule.from_tokens(tokens, recipe.model.seq_len);
    if (!size) return fail(size.error().what, recipe.where("dataset.path"), size.error().hint);
    size->format = std::move(format);
    size->basis = std::move(basis);
    return size;
  };
  if (d.tokens)
    return sized(*d.tokens, "stated",
                 fmt::format("stated: dataset.tokens at {}", recipe.where("dataset.tokens")));
  if (d.path.empty())
    return fail("no dataset: dataset.path is empty", recipe.where("dataset.path"),
                "set dataset.path (a directory of text files), or state dataset.tokens = N (or --tokens N)");
  auto corpus = scan_text_corpus(d.path);
  if (!corpus) return fail(corpus.error().what, recipe.where("dataset.path"), corpus.error().hint);
  std::string cache_file;
  std::vector<std::string> warnings;
  if (!d.tokenizer.empty()) {
    auto digest = tokenizer_digest(d.tokenizer);
    if (!digest) return fail(digest.error().what, recipe.where("dataset.tokenizer"), digest.error().hint);
    const auto file =
        token_count_file(recipe.run.runs_dir, token_count_identity(*corpus, d.tokenizer, *digest));
    cache_file = file.string();
    auto cached = read_token_count(file, *corpus);
    if (!cached) return std::unexpected(cached.error());
    if (*cached) {
      auto size = sized((*cached)->tokens, "counted",
                        fmt::format("counted with the tokenizer in {} ({})", d.tokenizer, file.string()));
      if (size) size->token_count_file = cache_file;
      return size;
    }
  } else {
    warnings.push_back(
        "dataset.tokenizer is not set: the tokens cannot be counted with the model's tokenizer, only "
        "estimated");
  }
  const std::uint64_t estimate = corpus->bytes / estimate_bytes_per_token;
  auto size = sized(
      estimate, "estimate",
      fmt::format("{} bytes in {} files under {} / {} bytes per token (a rule of thumb for English "
                  "text; compressed parquet counts low)",
                  corpus->bytes, corpus->files.size(), corpus->path.string(), estimate_bytes_per_token));
  if (!size) return size;
  size->files = corpus->files.size();
  size->token_count_file = cache_file;
  size->warnings = std::move(warnings);
  return size;
}

}  // namespace

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
  if (recipe.dataset.format == "text") return count_text_dataset(recipe);
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
