#pragma once

// The few Arrow flatbuffer fields trnslurm reads, accessed through flatbuffers' generic Table and
// checked with flatbuffers::Verifier before every use: the metadata of a dataset file is
// untrusted input (Arrow's own security notes say so). Field offsets, enums and struct sizes
// come from the headers flatc generates from Arrow's Message.fbs, Schema.fbs and File.fbs
// (third_party/arrow-format, cmake/ArrowFormat.cmake); their accessors are not used.
// Internal to the core.

#include <flatbuffers/flatbuffers.h>

#include <arrow_format/File_generated.h>
#include <arrow_format/Message_generated.h>
#include <arrow_format/Schema_generated.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace trnslurm::arrow_fb {

namespace fb = org::apache::arrow::flatbuf;
using flatbuffers::voffset_t;

// table Message { version; header (union: type, then table); bodyLength; custom_metadata }
inline constexpr voffset_t message_version = fb::Message::VT_VERSION;
inline constexpr voffset_t message_header_type = fb::Message::VT_HEADER_TYPE;
inline constexpr voffset_t message_header = fb::Message::VT_HEADER;
inline constexpr voffset_t message_body_length = fb::Message::VT_BODYLENGTH;
using MessageHeader = fb::MessageHeader;
// MetadataVersion V4 is Arrow 0.8+, V5 Arrow 1.0+.
inline constexpr std::int16_t metadata_v4 = static_cast<std::int16_t>(fb::MetadataVersion::V4);
inline constexpr std::int16_t metadata_v5 = static_cast<std::int16_t>(fb::MetadataVersion::V5);

// table RecordBatch { length; nodes: [FieldNode]; buffers: [Buffer]; compression; ... }
inline constexpr voffset_t record_batch_length = fb::RecordBatch::VT_LENGTH;
inline constexpr voffset_t record_batch_nodes = fb::RecordBatch::VT_NODES;
inline constexpr voffset_t record_batch_buffers = fb::RecordBatch::VT_BUFFERS;
inline constexpr voffset_t record_batch_compression = fb::RecordBatch::VT_COMPRESSION;
inline constexpr std::size_t field_node_size = sizeof(fb::FieldNode);
inline constexpr std::size_t buffer_size = sizeof(fb::Buffer);

// table Schema { endianness (Little = 0); fields: [Field]; ... }
inline constexpr voffset_t schema_endianness = fb::Schema::VT_ENDIANNESS;
inline constexpr voffset_t schema_fields = fb::Schema::VT_FIELDS;
// table Field { name; nullable; type (union); dictionary; children: [Field]; custom_metadata }
inline constexpr voffset_t field_name = fb::Field::VT_NAME;
inline constexpr voffset_t field_type_type = fb::Field::VT_TYPE_TYPE;
inline constexpr voffset_t field_type = fb::Field::VT_TYPE;
inline constexpr voffset_t field_dictionary = fb::Field::VT_DICTIONARY;
inline constexpr voffset_t field_children = fb::Field::VT_CHILDREN;
using Type = fb::Type;
// table Int { bitWidth; is_signed }   table FixedSizeList { listSize }
inline constexpr voffset_t int_bit_width = fb::Int::VT_BITWIDTH;
inline constexpr voffset_t fixed_size_list_size = fb::FixedSizeList::VT_LISTSIZE;

// table Footer { version; schema; dictionaries: [Block]; recordBatches: [Block]; custom_metadata }
inline constexpr voffset_t footer_schema = fb::Footer::VT_SCHEMA;
inline constexpr voffset_t footer_record_batches = fb::Footer::VT_RECORDBATCHES;
inline constexpr std::size_t block_size = sizeof(fb::Block);

// A table whose start has been verified; every accessor verifies the field before reading it
// and returns nullopt when the bytes are not a valid field (absent fields give the default).
class Table {
 public:
  // The root table of a buffer (a Message or a Footer).
  static std::optional<Table> root(flatbuffers::Verifier& verifier, std::span<const std::byte> buffer);

  template <class T>
  std::optional<T> scalar(voffset_t f, T default_value) const {
    if (!table_->VerifyField<T>(*verifier_, f, sizeof(T))) return std::nullopt;
    return table_->GetField<T>(f, default_value);
  }
  // Absent: a Table with present() false.
  std::optional<Table> table(voffset_t f) const;
  std::optional<std::string_view> string(voffset_t f) const;
  // A vector of structs of elem_size bytes each, as raw bytes (count * elem_size).
  std::optional<std::span<const std::byte>> structs(voffset_t f, std::size_t elem_size) const;
  // A vector of tables: its length, then each element checked on access.
  std::optional<std::uint32_t> tables_size(voffset_t f) const;
  std::optional<Table> tables_at(voffset_t f, std::uint32_t i) const;

  bool present() const { return table_ != nullptr; }

 private:
  Table(flatbuffers::Verifier* v, const std::uint8_t* base, const flatbuffers::Table* t)
      : verifier_(v), base_(base), table_(t) {}
  static std::optional<Table> at(flatbuffers::Verifier* v, const std::uint8_t* base, std::size_t pos);
  flatbuffers::Verifier* verifier_ = nullptr;
  const std::uint8_t* base_ = nullptr;
  const flatbuffers::Table* table_ = nullptr;
};

// Verifier limits for Arrow metadata: a schema nests a few levels, never thousands.
flatbuffers::Verifier::Options verifier_options();

}  // namespace trnslurm::arrow_fb
