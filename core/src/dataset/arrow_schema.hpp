#pragma once

// What an Arrow schema says about the token column: its type, and where its node and buffers sit
// in each record batch (nodes and buffers follow the schema's fields in pre-order). Internal.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "arrow_flatbuf.hpp"

namespace trnslurm::dataset {

enum class TokenKind { absent, list, large_list, fixed_size_list, other };

struct TokenLayout {
  TokenKind kind = TokenKind::absent;
  std::string type;                         // e.g. "List<Int32>", for messages
  std::uint64_t list_size = 0;              // FixedSizeList's listSize
  std::optional<std::size_t> node_index;    // the column's FieldNode; its values' node follows it
  std::optional<std::size_t> buffer_index;  // its validity buffer; List offsets are the next one
  std::size_t top_level_fields = 0;

  bool same_as(const TokenLayout& o) const {
    return kind == o.kind && type == o.type && list_size == o.list_size && node_index == o.node_index &&
           buffer_index == o.buffer_index;
  }
};

// Reads a Schema table. Errors are messages; the caller adds the file and offset.
std::expected<TokenLayout, std::string> parse_schema(const arrow_fb::Table& schema,
                                                     std::string_view token_column);

}  // namespace trnslurm::dataset
