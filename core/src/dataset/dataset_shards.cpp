#include "dataset_shards.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

#include "dataset_file.hpp"
#include "trnslurm/util/checked.hpp"

namespace trnslurm::dataset {

ArrowShards::ArrowShards(const DatasetRequest& request) : request_(request) {
  options_.token_column = request_.token_column;
  options_.verify = request_.verify;
  options_.seq_len = request_.seq_len;
}

Result<void> ArrowShards::add(const std::filesystem::path& file) {
  auto c = count_arrow(file, options_);
  if (!c) return std::unexpected(c.error());
  return add(file, *c);
}

namespace {
// Shards counted between two folds: bounds the counts held at once (memory stays a few hundred
// kilobytes whatever the number of shards) at the price of readers waiting once per chunk.
constexpr std::size_t chunk_size = 1024;
}  // namespace

Result<void> ArrowShards::add_all(const Directory& dir, const std::filesystem::path& path,
                                  std::span<const std::string> names) {
  // On a shared file system each open and read waits a network round trip: one reader at a
  // time would wait them all in turn (docs/datasets.md, bench/dataset-count --latency).
  const auto readers = std::max<std::size_t>(1, request_.readers);
  for (std::size_t base = 0; base < names.size(); base += chunk_size) {
    const auto chunk = names.subspan(base, std::min(chunk_size, names.size() - base));
    std::vector<Result<ArrowFileCount>> counts(chunk.size());
    std::atomic<std::size_t> next{0};
    // Past the first failure, nothing more is read: it is the error reported.
    std::atomic<std::size_t> first_failure{chunk.size()};
    const auto read = [&] {
      for (std::size_t i = next++; i < chunk.size() && i < first_failure; i = next++) {
        auto opened = ReadOnlyFile::open_in(dir, chunk[i].c_str(), path / chunk[i]);
        counts[i] = opened ? count_arrow(*opened, options_) : std::unexpected(opened.error());
        if (counts[i]) continue;
        for (auto f = first_failure.load(); i < f && !first_failure.compare_exchange_weak(f, i);) {
        }
      }
    };
    {
      std::vector<std::jthread> helpers;
      try {
        for (std::size_t t = 1; t < std::min(readers, chunk.size()); ++t) helpers.emplace_back(read);
      } catch (const std::system_error&) {
        // No thread to be had: the readers started, this one among them, do the work.
      }
      read();
    }  // joined here
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      if (!counts[i]) return std::unexpected(counts[i].error());
      if (auto r = add(path / chunk[i], *counts[i]); !r) return r;
    }
  }
  return {};
}

Result<void> ArrowShards::add(const std::filesystem::path& file, const ArrowFileCount& c) {
  if (!layout_) {
    layout_ = c.layout;
    first_file_ = file;
  } else if (!layout_->same_as(c.layout)) {
    return fail(
        fmt::format("column '{}' is {} here but {} in {}", request_.token_column,
                    c.layout.kind == TokenKind::absent ? "absent" : c.layout.type,
                    layout_->kind == TokenKind::absent ? "absent" : layout_->type, first_file_.string()),
        where(file, 0), "all shards of a dataset must share one schema");
  }
  if (add_overflows(rows_, c.rows, rows_) || add_overflows(token_values_, c.token_values, token_values_)) {
    return fail("row or token count overflows 64 bits", file.string());
  }
  if (const auto& verified = c.verified_tokens) verified_tokens_ = verified_tokens_.value_or(0) + *verified;
  ++files_;
  return {};
}

Result<void> ArrowShards::finish(DatasetCount& out) const {
  out.rows = rows_;
  out.files = files_;
  if (!layout_) return {};
  const auto& column = request_.token_column;
  switch (layout_->kind) {
    case TokenKind::fixed_size_list: {
      std::uint64_t tokens = 0;
      if (!mul_overflows(rows_, layout_->list_size, tokens)) out.tokens = tokens;
      break;
    }
    case TokenKind::list:
    case TokenKind::large_list:
      out.tokens = verified_tokens_ ? *verified_tokens_ : token_values_;
      if (request_.seq_len && !request_.verify) {
        std::uint64_t expected = 0;
        if (mul_overflows(rows_, *request_.seq_len, expected) || expected != token_values_) {
          out.warnings.push_back(
              fmt::format("column '{}' holds {} tokens in {} rows, not {} rows x seq_len {}: some rows are "
                          "not seq_len long "
                          "(--verify names them)",
                          column, token_values_, rows_, rows_, *request_.seq_len));
        }
      }
      break;
    case TokenKind::absent:
    case TokenKind::other: {
      const auto why = layout_->kind == TokenKind::absent
                           ? fmt::format("no column '{}' in the schema", column)
                           : fmt::format("column '{}' is {}, not a list of tokens", column, layout_->type);
      if (request_.verify) {
        return fail(fmt::format("{}: --verify cannot check the tokens of each row", why),
                    where(first_file_, 0),
                    "name the column that holds the token ids, or count without --verify");
      }
      out.warnings.push_back(why + ": tokens not counted");
      break;
    }
  }
  return {};
}

}  // namespace trnslurm::dataset
