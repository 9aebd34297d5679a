#pragma once

// Hand-built Arrow IPC messages, for what an honest writer never produces: hostile footers,
// impossible lengths, deep nesting (unit tests), and shards whose bodies are holes in a sparse
// file (the benchmark: sizes of gigabytes without writing them). Field offsets come from the
// headers flatc generates from Arrow's Message.fbs / Schema.fbs / File.fbs (cmake/ArrowFormat.cmake),
// as in core/src/dataset/arrow_flatbuf.hpp; the real-writer fixtures come from Apache Arrow JS
// (tools/dataset-fixtures), not from here.

#include <flatbuffers/flatbuffers.h>

#include <arrow_format/File_generated.h>
#include <arrow_format/Message_generated.h>
#include <arrow_format/Schema_generated.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace trnslurm::test::craft {

using Bytes = std::vector<std::uint8_t>;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::uoffset_t;

namespace fb = org::apache::arrow::flatbuf;

constexpr std::uint8_t type_id(fb::Type t) {
  return static_cast<std::uint8_t>(t);
}
constexpr std::uint8_t header_id(fb::MessageHeader h) {
  return static_cast<std::uint8_t>(h);
}
constexpr std::int16_t metadata_v5 = static_cast<std::int16_t>(fb::MetadataVersion::V5);

struct Pair {
  std::int64_t a;
  std::int64_t b;
};
struct Block {
  std::int64_t offset;
  std::int32_t metadata_length;
  std::int32_t padding;
  std::int64_t body_length;
};
static_assert(sizeof(Pair) == sizeof(fb::FieldNode) && sizeof(Pair) == sizeof(fb::Buffer));
static_assert(sizeof(Block) == sizeof(fb::Block));

inline uoffset_t int_type(FlatBufferBuilder& b, int bits) {
  const auto t = b.StartTable();
  b.AddElement<std::int32_t>(fb::Int::VT_BITWIDTH, bits, 0);
  b.AddElement<std::uint8_t>(fb::Int::VT_IS_SIGNED, 1, 0);
  return b.EndTable(t);
}

inline uoffset_t empty_table(FlatBufferBuilder& b) {
  return b.EndTable(b.StartTable());
}

// Field { name, nullable, type_type, type, dictionary, children }.
inline uoffset_t field_table(FlatBufferBuilder& b, const std::string& name, std::uint8_t type_type,
                             uoffset_t type, const std::vector<uoffset_t>& children) {
  std::vector<flatbuffers::Offset<flatbuffers::Table>> kids;
  for (auto c : children) kids.emplace_back(c);
  const auto kids_vec = b.CreateVector(kids);
  const auto n = b.CreateString(name);
  const auto t = b.StartTable();
  b.AddOffset(fb::Field::VT_NAME, n);
  b.AddElement<std::uint8_t>(fb::Field::VT_NULLABLE, 1, 0);
  b.AddElement<std::uint8_t>(fb::Field::VT_TYPE_TYPE, type_type, 0);
  b.AddOffset(fb::Field::VT_TYPE, flatbuffers::Offset<void>(type));
  b.AddOffset(fb::Field::VT_CHILDREN, kids_vec);
  return b.EndTable(t);
}

// input_ids: List<Int32>, or nested `depth` lists deep.
inline uoffset_t list_field(FlatBufferBuilder& b, const std::string& name, int depth = 1) {
  auto inner = field_table(b, "item", type_id(fb::Type::Int), int_type(b, 32), {});
  for (int i = 1; i < depth; ++i)
    inner = field_table(b, "item", type_id(fb::Type::List), empty_table(b), {inner});
  return field_table(b, name, type_id(fb::Type::List), empty_table(b), {inner});
}

inline uoffset_t schema_table(FlatBufferBuilder& b, const std::vector<uoffset_t>& fields) {
  std::vector<flatbuffers::Offset<flatbuffers::Table>> fs;
  for (auto f : fields) fs.emplace_back(f);
  const auto v = b.CreateVector(fs);
  const auto t = b.StartTable();
  b.AddOffset(fb::Schema::VT_FIELDS, v);
  return b.EndTable(t);
}

inline uoffset_t record_batch_table(FlatBufferBuilder& b, std::int64_t length, const std::vector<Pair>& nodes,
                                    const std::vector<Pair>& buffers) {
  const auto nv = b.CreateVectorOfStructs(nodes.data(), nodes.size()).o;
  const auto bv = b.CreateVectorOfStructs(buffers.data(), buffers.size()).o;
  const auto t = b.StartTable();
  b.AddElement<std::int64_t>(fb::RecordBatch::VT_LENGTH, length, -1);  // written even when 0
  b.AddOffset(fb::RecordBatch::VT_NODES, flatbuffers::Offset<void>(nv));
  b.AddOffset(fb::RecordBatch::VT_BUFFERS, flatbuffers::Offset<void>(bv));
  return b.EndTable(t);
}

// An encapsulated message: 0xFFFFFFFF, metadata length (padded to 8), Message flatbuffer.
// The body (body_length bytes) is not included: the caller writes it or leaves a hole.
inline Bytes message(FlatBufferBuilder& b, std::uint8_t header_type, uoffset_t header,
                     std::int64_t body_length, std::int16_t version = metadata_v5) {
  const auto t = b.StartTable();
  b.AddElement<std::int16_t>(fb::Message::VT_VERSION, version, -1);
  b.AddElement<std::uint8_t>(fb::Message::VT_HEADER_TYPE, header_type, 0);
  b.AddOffset(fb::Message::VT_HEADER, flatbuffers::Offset<void>(header));
  b.AddElement<std::int64_t>(fb::Message::VT_BODYLENGTH, body_length, -1);
  b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  const auto size = b.GetSize();
  const auto padded = (size + 7) / 8 * 8;
  Bytes out(8 + padded, 0);
  const std::uint32_t cont = 0xFFFFFFFFu;
  const auto len = static_cast<std::int32_t>(padded);
  std::memcpy(out.data(), &cont, 4);
  std::memcpy(out.data() + 4, &len, 4);
  std::memcpy(out.data() + 8, b.GetBufferPointer(), size);
  return out;
}

inline Bytes schema_message(int list_depth = 1) {
  FlatBufferBuilder b;
  const auto s = schema_table(b, {list_field(b, "input_ids", list_depth)});
  return message(b, header_id(fb::MessageHeader::Schema), s, 0);
}

// A record batch of `rows` rows of seq_len tokens in one List<Int32> column; its body length.
inline std::int64_t list_body_length(std::int64_t rows, std::int64_t seq_len) {
  return ((rows + 1) * 4 + 7) / 8 * 8 + rows * seq_len * 4;
}
inline Bytes list_batch_message(std::int64_t rows, std::int64_t seq_len) {
  FlatBufferBuilder b;
  const std::int64_t offsets = ((rows + 1) * 4 + 7) / 8 * 8;
  const auto rb = record_batch_table(b, rows, {{rows, 0}, {rows * seq_len, 0}},
                                     {{0, 0}, {0, (rows + 1) * 4}, {offsets, rows * seq_len * 4}});
  return message(b, header_id(fb::MessageHeader::RecordBatch), rb, list_body_length(rows, seq_len));
}

inline Bytes end_of_stream() {
  return {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
}

inline void append(Bytes& out, const Bytes& more) {
  out.insert(out.end(), more.begin(), more.end());
}

// An Arrow file: "ARROW1\0\0", the messages given, a footer with the schema and these blocks.
inline Bytes file_with_footer(const Bytes& body, const std::vector<Block>& blocks) {
  Bytes out = {'A', 'R', 'R', 'O', 'W', '1', 0, 0};
  append(out, body);
  FlatBufferBuilder b;
  const auto s = schema_table(b, {list_field(b, "input_ids")});
  const auto bv = b.CreateVectorOfStructs(blocks.data(), blocks.size()).o;
  const auto t = b.StartTable();
  b.AddElement<std::int16_t>(fb::Footer::VT_VERSION, metadata_v5, -1);
  b.AddOffset(fb::Footer::VT_SCHEMA, flatbuffers::Offset<void>(s));
  b.AddOffset(fb::Footer::VT_RECORDBATCHES, flatbuffers::Offset<void>(bv));
  b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  const auto len = static_cast<std::int32_t>(b.GetSize());
  const auto* l = reinterpret_cast<const std::uint8_t*>(&len);
  out.insert(out.end(), l, l + 4);
  for (char c : std::string("ARROW1")) out.push_back(static_cast<std::uint8_t>(c));
  return out;
}

}  // namespace trnslurm::test::craft
