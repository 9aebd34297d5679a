#include "arrow_schema.hpp"

#include <fmt/format.h>

namespace trnslurm::dataset {
namespace {

using arrow_fb::Type;
namespace fb = arrow_fb;

// A schema nests a handful of levels; anything deeper is hostile.
constexpr int max_depth = 32;
constexpr std::size_t max_fields = 100000;

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Null:
      return "Null";
    case Type::Int:
      return "Int";
    case Type::FloatingPoint:
      return "FloatingPoint";
    case Type::Binary:
      return "Binary";
    case Type::Utf8:
      return "Utf8";
    case Type::Bool:
      return "Bool";
    case Type::Decimal:
      return "Decimal";
    case Type::Date:
      return "Date";
    case Type::Time:
      return "Time";
    case Type::Timestamp:
      return "Timestamp";
    case Type::Interval:
      return "Interval";
    case Type::List:
      return "List";
    case Type::Struct_:
      return "Struct";
    case Type::Union:
      return "Union";
    case Type::FixedSizeBinary:
      return "FixedSizeBinary";
    case Type::FixedSizeList:
      return "FixedSizeList";
    case Type::Map:
      return "Map";
    case Type::Duration:
      return "Duration";
    case Type::LargeBinary:
      return "LargeBinary";
    case Type::LargeUtf8:
      return "LargeUtf8";
    case Type::LargeList:
      return "LargeList";
    case Type::RunEndEncoded:
      return "RunEndEncoded";
    case Type::BinaryView:
      return "BinaryView";
    case Type::Utf8View:
      return "Utf8View";
    case Type::ListView:
      return "ListView";
    case Type::LargeListView:
      return "LargeListView";
    case Type::NONE:
      break;
  }
  return "unknown";
}

// Buffers of one array of this type itself (children not included), Arrow columnar format V5;
// nullopt where the count is not fixed by the schema (unions, views).
std::optional<std::size_t> own_buffers(Type t) {
  switch (t) {
    case Type::Null:
    case Type::RunEndEncoded:
      return 0;
    case Type::Struct_:
    case Type::FixedSizeList:
      return 1;
    case Type::Int:
    case Type::FloatingPoint:
    case Type::Bool:
    case Type::Decimal:
    case Type::Date:
    case Type::Time:
    case Type::Timestamp:
    case Type::Interval:
    case Type::FixedSizeBinary:
    case Type::Duration:
    case Type::List:
    case Type::LargeList:
    case Type::Map:
      return 2;
    case Type::Binary:
    case Type::Utf8:
    case Type::LargeBinary:
    case Type::LargeUtf8:
    case Type::ListView:
    case Type::LargeListView:
      return 3;
    default:
      return std::nullopt;
  }
}

struct Walk {
  std::size_t nodes = 0;
  std::optional<std::size_t> buffers = 0;  // nullopt once a field of unknown layout was seen
  std::size_t fields = 0;
};

// Adds one field and its children to the walk (nodes and buffers in pre-order).
std::expected<void, std::string> walk_field(const fb::Table& field, int depth, Walk& w) {
  if (depth > max_depth) return std::unexpected(fmt::format("schema nests deeper than {} levels", max_depth));
  if (++w.fields > max_fields)
    return std::unexpected(fmt::format("schema has more than {} fields", max_fields));
  const auto type = field.scalar<std::uint8_t>(fb::field_type_type, 0);
  const auto dictionary = field.table(fb::field_dictionary);
  if (!type || !dictionary) return std::unexpected("invalid Field table in the schema");
  ++w.nodes;
  // A dictionary-encoded column is its integer indices in a record batch: one node, two buffers.
  if (dictionary->present()) {
    if (w.buffers) *w.buffers += 2;
    return {};
  }
  const auto own = own_buffers(static_cast<Type>(*type));
  if (own && w.buffers) {
    *w.buffers += *own;
  } else {
    w.buffers.reset();
  }
  const auto n = field.tables_size(fb::field_children);
  if (!n) return std::unexpected("invalid children of a Field in the schema");
  for (std::uint32_t i = 0; i < *n; ++i) {
    const auto child = field.tables_at(fb::field_children, i);
    if (!child || !child->present()) return std::unexpected("invalid child Field in the schema");
    if (auto r = walk_field(*child, depth + 1, w); !r) return r;
  }
  return {};
}

std::expected<std::string, std::string> describe(const fb::Table& field, int depth) {
  if (depth > 3) return std::string("...");
  const auto type = field.scalar<std::uint8_t>(fb::field_type_type, 0);
  const auto type_table = field.table(fb::field_type);
  if (!type || !type_table) return std::unexpected("invalid Field table in the schema");
  const auto t = static_cast<Type>(*type);
  std::string out(type_name(t));
  if (t == Type::Int && type_table->present()) {
    const auto bits = type_table->scalar<std::int32_t>(fb::int_bit_width, 0);
    if (!bits) return std::unexpected("invalid Int type in the schema");
    out += std::to_string(*bits);
  }
  const auto n = field.tables_size(fb::field_children);
  if (!n) return std::unexpected("invalid children of a Field in the schema");
  if (*n > 0) {
    const auto child = field.tables_at(fb::field_children, 0);
    if (!child || !child->present()) return std::unexpected("invalid child Field in the schema");
    auto inner = describe(*child, depth + 1);
    if (!inner) return inner;
    out += "<" + *inner + ">";
  }
  return out;
}

}  // namespace

std::expected<TokenLayout, std::string> parse_schema(const fb::Table& schema, std::string_view token_column) {
  TokenLayout layout;
  const auto endianness = schema.scalar<std::int16_t>(fb::schema_endianness, 0);
  if (!endianness) return std::unexpected("invalid Schema table");
  if (*endianness != 0) return std::unexpected("big-endian Arrow data is not supported");
  const auto n = schema.tables_size(fb::schema_fields);
  if (!n) return std::unexpected("invalid field list in the Schema");
  layout.top_level_fields = *n;
  Walk w;
  for (std::uint32_t i = 0; i < *n; ++i) {
    const auto field = schema.tables_at(fb::schema_fields, i);
    if (!field || !field->present()) return std::unexpected("invalid Field table in the schema");
    const auto name = field->string(fb::field_name);
    if (!name) return std::unexpected("invalid field name in the schema");
    if (*name == token_column && layout.kind == TokenKind::absent) {
      const auto type = field->scalar<std::uint8_t>(fb::field_type_type, 0);
      const auto type_table = field->table(fb::field_type);
      const auto dictionary = field->table(fb::field_dictionary);
      if (!type || !type_table || !dictionary) return std::unexpected("invalid Field table in the schema");
      auto described = describe(*field, 0);
      if (!described) return std::unexpected(described.error());
      layout.type = *described;
      layout.node_index = w.nodes;
      layout.buffer_index = w.buffers;
      switch (static_cast<Type>(*type)) {
        case Type::List:
          layout.kind = TokenKind::list;
          break;
        case Type::LargeList:
          layout.kind = TokenKind::large_list;
          break;
        case Type::FixedSizeList: {
          layout.kind = TokenKind::fixed_size_list;
          if (!type_table->present())
            return std::unexpected("FixedSizeList without its listSize in the schema");
          const auto size = type_table->scalar<std::int32_t>(fb::fixed_size_list_size, 0);
          if (!size || *size < 0) return std::unexpected("invalid FixedSizeList listSize in the schema");
          layout.list_size = static_cast<std::uint64_t>(*size);
          break;
        }
        default:
          layout.kind = TokenKind::other;
          break;
      }
      if (dictionary->present()) layout.kind = TokenKind::other;
    }
    if (auto r = walk_field(*field, 0, w); !r) return std::unexpected(r.error());
  }
  return layout;
}

}  // namespace trnslurm::dataset
