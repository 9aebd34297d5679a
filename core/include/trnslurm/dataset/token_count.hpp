#pragma once
// A text corpus's token count under one tokenizer, cached beside the runs (docs/datasets.md,
// "Token counts"). TorchTitan tokenizes text on the fly, so the plan's steps need the count the
// model's own tokenizer gives; a job on a compute node counts it (the chain's token-count stage)
// and writes it where token_count_file says. The cache is keyed by what the count depends on:
// the corpus's files (path, number, bytes, newest mtime) and the tokenizer's files' SHA-256.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The regular files under a corpus directory (recursively; names starting with '.' skipped, as
// the Hugging Face loader skips them), or one file.
struct CorpusFile {
  std::string relative;  // to the corpus path ("" when the corpus is one file)
  std::uint64_t bytes = 0;
  std::int64_t mtime_ns = 0;
};
struct TextCorpus {
  std::filesystem::path path;     // absolute
  std::vector<CorpusFile> files;  // sorted by relative path
  std::uint64_t bytes = 0;
};
Result<TextCorpus> scan_text_corpus(const std::filesystem::path& path);

// SHA-256 over tokenizer.json then tokenizer_config.json of a Hugging Face assets directory
// (those present; at least one must be).
Result<std::string> tokenizer_digest(const std::filesystem::path& tokenizer_dir);

// The text the cache is keyed by: the corpus's absolute path, each file's relative path, size
// and mtime, the tokenizer's path and digest. The count lives in
// <runs_dir>/token-counts/<first 16 hex digits of its SHA-256>.json, which the chain's count job
// is given whole (it computes no key of its own).
std::string token_count_identity(const TextCorpus& corpus, const std::filesystem::path& tokenizer,
                                 const std::string& tokenizer_sha256);
std::filesystem::path token_count_file(const std::filesystem::path& runs_dir, const std::string& identity);

// The count in a file the job wrote, {"format": 1, "dataset": "/abs", "tokenizer": "/abs",
// "tokens": N, "documents": D, "counted_by": "...", "time": <unix seconds>}: nullopt when there is
// no file yet; an error naming the file when it is damaged or names another corpus.
struct TokenCount {
  std::uint64_t tokens = 0;
  std::optional<std::uint64_t> documents;
  std::string counted_by;
};
Result<std::optional<TokenCount>> read_token_count(const std::filesystem::path& file,
                                                   const TextCorpus& corpus);

// The estimate shown until a count exists: bytes / 4 (about four characters of English text
// per token, the rule of thumb OpenAI's tokenizer documentation gives), never passed off as a count.
inline constexpr std::uint64_t estimate_bytes_per_token = 4;

}  // namespace trnslurm
