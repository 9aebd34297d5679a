#pragma once

// The few Arrow flatbuffer fields trnslurm reads, accessed through flatbuffers' generic Table and
// checked with flatbuffers::Verifier before every use: Debian ships no generated Arrow headers,
// and the metadata of a dataset file is untrusted input (Arrow's own security notes say so).
//
// A table's field number i sits at vtable offset 4 + 2 * i; a union takes two fields (its type,
// then the table). Field numbers below are those of apache/arrow format/Message.fbs, Schema.fbs
// and File.fbs, in declaration order. Internal to the core.

#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace trnslurm::arrow_fb {

using flatbuffers::voffset_t;

constexpr voffset_t field(int number) {
  return static_cast<voffset_t>(4 + 2 * number);
}

// Message.fbs: table Message { version: MetadataVersion (short); header: MessageHeader (union);
//                              bodyLength: long; custom_metadata: [KeyValue]; }
inline constexpr voffset_t message_version = field(0);
inline constexpr voffset_t message_header_type = field(1);
inline constexpr voffset_t message_header = field(2);
inline constexpr voffset_t message_body_length = field(3);
// union MessageHeader { Schema, DictionaryBatch, RecordBatch, Tensor, SparseTensor }
enum class MessageHeader : std::uint8_t {
  none = 0,
  schema,
  dictionary_batch,
  record_batch,
  tensor,
  sparse_tensor
};
// enum MetadataVersion : short { V1, V2, V3, V4, V5 }: V4 is Arrow 0.8+, V5 Arrow 1.0+.
inline constexpr std::int16_t metadata_v4 = 3;
inline constexpr std::int16_t metadata_v5 = 4;

// Message.fbs: table RecordBatch { length: long; nodes: [FieldNode]; buffers: [Buffer];
//                                  compression: BodyCompression; variadicBufferCounts: [long]; }
inline constexpr voffset_t record_batch_length = field(0);
inline constexpr voffset_t record_batch_nodes = field(1);
inline constexpr voffset_t record_batch_buffers = field(2);
inline constexpr voffset_t record_batch_compression = field(3);
// struct FieldNode { length: long; null_count: long; }   struct Buffer { offset: long; length: long; }
inline constexpr std::size_t field_node_size = 16;
inline constexpr std::size_t buffer_size = 16;

// Schema.fbs: table Schema { endianness: Endianness (short, Little = 0); fields: [Field]; ... }
inline constexpr voffset_t schema_endianness = field(0);
inline constexpr voffset_t schema_fields = field(1);
// Schema.fbs: table Field { name: string; nullable: bool; type: Type (union); dictionary: DictionaryEncoding;
//                           children: [Field]; custom_metadata: [KeyValue]; }
inline constexpr voffset_t field_name = field(0);
inline constexpr voffset_t field_type_type = field(2);
inline constexpr voffset_t field_type = field(3);
inline constexpr voffset_t field_dictionary = field(4);
inline constexpr voffset_t field_children = field(5);
// union Type, in declaration order from 1.
enum class Type : std::uint8_t {
  none = 0,
  null_,
  int_,
  floating_point,
  binary,
  utf8,
  bool_,
  decimal,
  date,
  time,
  timestamp,
  interval,
  list,
  struct_,
  union_,
  fixed_size_binary,
  fixed_size_list,
  map,
  duration,
  large_binary,
  large_utf8,
  large_list,
  run_end_encoded,
  binary_view,
  utf8_view,
  list_view,
  large_list_view
};
// table Int { bitWidth: int; is_signed: bool; }   table FixedSizeList { listSize: int; }
inline constexpr voffset_t int_bit_width = field(0);
inline constexpr voffset_t fixed_size_list_size = field(0);

// File.fbs: table Footer { version: MetadataVersion; schema: Schema; dictionaries: [Block];
//                          recordBatches: [Block]; custom_metadata: [KeyValue]; }
inline constexpr voffset_t footer_schema = field(1);
inline constexpr voffset_t footer_record_batches = field(3);
// struct Block { offset: long; metaDataLength: int; (4 bytes padding) bodyLength: long; }
inline constexpr std::size_t block_size = 24;

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
