#include "dataset_shards.hpp"

#include <fmt/format.h>

#include "dataset_file.hpp"
#include "trnslurm/util/checked.hpp"

namespace trnslurm::dataset {

ArrowShards::ArrowShards(const DatasetRequest& request) : request_(request) {
  options_.token_column = request_.token_column;
  options_.verify = request_.verify;
  options_.seq_len = request_.seq_len;
}

Result<void> ArrowShards::add(const std::filesystem::path& file) {
  auto opened = ReadOnlyFile::open(file);
  if (!opened) return std::unexpected(opened.error());
  return add(*opened);
}

Result<void> ArrowShards::add(const Directory& dir, const std::string& name,
                              const std::filesystem::path& file) {
  auto opened = ReadOnlyFile::open_in(dir, name.c_str(), file);
  if (!opened) return std::unexpected(opened.error());
  return add(*opened);
}

Result<void> ArrowShards::add(const ReadOnlyFile& opened) {
  const auto& file = opened.path();
  auto c = count_arrow(opened, options_);
  if (!c) return std::unexpected(c.error());
  if (!layout_) {
    layout_ = c->layout;
    first_file_ = file;
  } else if (!layout_->same_as(c->layout)) {
    return fail(
        fmt::format("column '{}' is {} here but {} in {}", request_.token_column,
                    c->layout.kind == TokenKind::absent ? "absent" : c->layout.type,
                    layout_->kind == TokenKind::absent ? "absent" : layout_->type, first_file_.string()),
        where(file, 0), "all shards of a dataset must share one schema");
  }
  if (add_overflows(rows_, c->rows, rows_) || add_overflows(token_values_, c->token_values, token_values_)) {
    return fail("row or token count overflows 64 bits", file.string());
  }
  if (const auto& verified = c->verified_tokens) verified_tokens_ = verified_tokens_.value_or(0) + *verified;
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
