// The token-count cache's keys and its reader (token_count.hpp). The key changes with any file of
// the corpus or the tokenizer; the reader also checks the corpus the file names, so a count
// copied from another corpus is not believed.
#include "trnslurm/dataset/token_count.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <system_error>

#include "trnslurm/util/file.hpp"
#include "trnslurm/util/sha256.hpp"

namespace trnslurm {

namespace fs = std::filesystem;

namespace {

std::int64_t mtime_ns(const fs::path& p, std::error_code& ec) {
  const auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Result<void> add_file(TextCorpus& corpus, const fs::path& p, std::string relative) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (!ec) {
    const auto mtime = mtime_ns(p, ec);
    if (!ec) {
      corpus.files.push_back({std::move(relative), size, mtime});
      corpus.bytes += size;
      return {};
    }
  }
  return fail(fmt::format("cannot read {}: {}", p.string(), ec.message()), p.string(),
              "check the dataset's permissions");
}

}  // namespace

Result<TextCorpus> scan_text_corpus(const fs::path& path) {
  std::error_code ec;
  TextCorpus corpus;
  corpus.path = fs::absolute(path, ec).lexically_normal();
  if (ec || !fs::exists(corpus.path, ec))
    return fail(fmt::format("no dataset at {}", path.string()), path.string(),
                "point dataset.path at a directory of json/jsonl, parquet, arrow or csv files with a `text` "
                "column, or state the count: dataset.tokens = N");
  if (fs::is_regular_file(corpus.path, ec)) {
    if (auto r = add_file(corpus, corpus.path, ""); !r) return std::unexpected(r.error());
    return corpus;
  }
  fs::recursive_directory_iterator it(corpus.path, fs::directory_options::none, ec);
  if (ec)
    return fail(fmt::format("cannot list {}: {}", path.string(), ec.message()), path.string(),
                "check the dataset's permissions");
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec)
      return fail(fmt::format("cannot list {}: {}", path.string(), ec.message()), path.string(),
                  "check the dataset's permissions");
    const auto name = it->path().filename().string();
    if (name.starts_with('.')) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    if (auto r = add_file(corpus, it->path(), it->path().lexically_relative(corpus.path).string()); !r)
      return std::unexpected(r.error());
  }
  std::ranges::sort(corpus.files, {}, &CorpusFile::relative);
  if (corpus.files.empty())
    return fail(fmt::format("the dataset directory {} holds no files", path.string()), path.string(),
                "point dataset.path at the training text");
  return corpus;
}

Result<std::string> tokenizer_digest(const fs::path& dir) {
  std::string content;
  bool found = false;
  for (const auto* name : {"tokenizer.json", "tokenizer_config.json"}) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / name, ec)) continue;
    // A tokenizer.json is tens of megabytes at most.
    auto text = read_file(dir / name, std::size_t{1} << 28);
    if (!text)
      return fail(fmt::format("cannot read {}", (dir / name).string()), (dir / name).string(),
                  "check the tokenizer directory's permissions");
    content += sha256_hex(*text);
    found = true;
  }
  if (!found)
    return fail(fmt::format("no tokenizer.json or tokenizer_config.json in {}", dir.string()), dir.string(),
                "point dataset.tokenizer at the model's Hugging Face assets directory");
  return sha256_hex(content);
}

std::string token_count_identity(const TextCorpus& corpus, const fs::path& tokenizer,
                                 const std::string& tokenizer_sha256) {
  std::string text = fmt::format("dataset={}\n", corpus.path.string());
  for (const auto& f : corpus.files)
    text += fmt::format("file={}\t{}\t{}\n", f.relative, f.bytes, f.mtime_ns);
  std::error_code ec;
  text += fmt::format("tokenizer={}\ntokenizer_sha256={}\n",
                      fs::absolute(tokenizer, ec).lexically_normal().string(), tokenizer_sha256);
  return text;
}

fs::path token_count_file(const fs::path& runs_dir, const std::string& identity) {
  return runs_dir / "token-counts" / (sha256_hex(identity).substr(0, 16) + ".json");
}

Result<std::optional<TokenCount>> read_token_count(const fs::path& file, const TextCorpus& corpus) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::optional<TokenCount>{};
  const auto damaged = [&](std::string_view why) -> Result<std::optional<TokenCount>> {
    return fail(fmt::format("the token count {} is damaged: {}", file.string(), why), file.string(),
                "remove it; the chain's token-count stage writes it again");
  };
  auto text = read_file(file, std::size_t{1} << 20);
  if (!text) return damaged("unreadable or larger than 1 MiB");
  const auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return damaged("not a JSON object");
  if (!doc.contains("format") || doc["format"] != 1) return damaged("not format 1");
  if (!doc.contains("tokens") || !doc["tokens"].is_number_unsigned()) return damaged("no token count");
  if (doc.contains("dataset") && (!doc["dataset"].is_string() || doc["dataset"] != corpus.path.string()))
    return fail(fmt::format("the token count {} counts another corpus", file.string()), file.string(),
                "remove it; the chain's token-count stage counts this one");
  TokenCount count;
  count.tokens = doc["tokens"].get<std::uint64_t>();
  if (doc.contains("documents") && doc["documents"].is_number_unsigned())
    count.documents = doc["documents"].get<std::uint64_t>();
  if (doc.contains("counted_by") && doc["counted_by"].is_string()) count.counted_by = doc["counted_by"];
  return std::optional<TokenCount>{count};
}

}  // namespace trnslurm
