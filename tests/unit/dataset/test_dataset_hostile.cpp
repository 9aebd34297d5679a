// Hostile Arrow metadata built by hand (tests/support/arrow_craft.hpp): well-formed flatbuffers
// that say impossible things. Each must be an Error at the right file and offset.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <string>

#include "../../support/arrow_craft.hpp"
#include "dataset_test_util.hpp"
#include "trnslurm/dataset/dataset.hpp"

using namespace trnslurm;
namespace craft = trnslurm::test::craft;

namespace {

struct Written {
  trnslurm::test::ScratchDir dir;
  std::filesystem::path file;
  explicit Written(const craft::Bytes& bytes) : file(dir.path() / "x.arrow") {
    trnslurm::test::write_bytes(file, reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  Result<DatasetCount> count(bool verify = false) const {
    return count_dataset({.path = file, .verify = verify});
  }
  std::string at(std::size_t offset) const { return file.string() + ":offset " + std::to_string(offset); }
};

// A stream of one schema and the given batches, each followed by a zero body of its length.
craft::Bytes stream(const std::vector<std::pair<std::int64_t, std::int64_t>>& batches) {
  auto out = craft::schema_message();
  for (const auto& [rows, seq] : batches) {
    craft::append(out, craft::list_batch_message(rows, seq));
    out.resize(out.size() + static_cast<std::size_t>(craft::list_body_length(rows, seq)), 0);
  }
  craft::append(out, craft::end_of_stream());
  return out;
}

}  // namespace

TEST_CASE("dataset hostile: hand-built stream counts as built (the crafted writer agrees with the reader)") {
  const Written w(stream({{3, 4}, {5, 4}}));
  const auto c = w.count();
  REQUIRE(c.has_value());
  CHECK(c->rows == 8);
  CHECK(c->tokens == 32);
}

TEST_CASE("dataset hostile: a body longer than the file") {
  auto bytes = craft::schema_message();
  const auto at = bytes.size();
  craft::append(bytes, craft::list_batch_message(1000, 2048));  // 8 MB body, none of it present
  craft::append(bytes, craft::end_of_stream());
  const Written w(bytes);
  const auto c = w.count();
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what.find("an Arrow message body needs") != std::string::npos);
  CHECK(c.error().where == w.at(at + craft::list_batch_message(1000, 2048).size()));
}

TEST_CASE("dataset hostile: negative and overflowing record batch lengths") {
  {
    craft::FlatBufferBuilder b;
    auto bytes = craft::schema_message();
    const auto at = bytes.size();
    craft::append(bytes, craft::message(b, craft::header_id(craft::fb::MessageHeader::RecordBatch),
                                        craft::record_batch_table(b, -5, {{-5, 0}, {0, 0}}, {}), 0));
    craft::append(bytes, craft::end_of_stream());
    const Written w(bytes);
    const auto c = w.count();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what == "invalid Arrow message: negative record batch length -5");
    CHECK(c.error().where == w.at(at));
  }
  {
    // Three batches claiming 2^63 - 1 rows each: the row total overflows 64 bits.
    auto bytes = craft::schema_message();
    const std::int64_t max = std::numeric_limits<std::int64_t>::max();
    for (int i = 0; i < 3; ++i) {
      craft::FlatBufferBuilder b;
      craft::append(bytes, craft::message(b, craft::header_id(craft::fb::MessageHeader::RecordBatch),
                                          craft::record_batch_table(b, max, {{max, 0}, {0, 0}}, {}), 0));
    }
    craft::append(bytes, craft::end_of_stream());
    const Written w(bytes);
    const auto c = w.count();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what.find("overflows 64 bits") != std::string::npos);
  }
}

TEST_CASE("dataset hostile: a record batch whose token column has the wrong row count") {
  craft::FlatBufferBuilder b;
  auto bytes = craft::schema_message();
  craft::append(bytes, craft::message(b, craft::header_id(craft::fb::MessageHeader::RecordBatch),
                                      craft::record_batch_table(b, 10, {{9, 0}, {0, 0}}, {}), 0));
  craft::append(bytes, craft::end_of_stream());
  const Written w(bytes);
  const auto c = w.count();
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "invalid Arrow message: column 'input_ids' has 9 rows in a record batch of 10");
}

TEST_CASE("dataset hostile: an offsets buffer outside the body") {
  craft::FlatBufferBuilder b;
  auto bytes = craft::schema_message();
  craft::append(bytes,
                craft::message(b, craft::header_id(craft::fb::MessageHeader::RecordBatch),
                               craft::record_batch_table(b, 1, {{1, 0}, {4, 0}}, {{0, 0}, {8, 8}}), 8));
  bytes.resize(bytes.size() + 8, 0);
  craft::append(bytes, craft::end_of_stream());
  const Written w(bytes);
  const auto c = w.count();
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "invalid Arrow message: buffer [8, +8) lies outside the 8-byte body");
}

TEST_CASE("dataset hostile: --verify refuses offsets that decrease or pass the values") {
  // One batch of 2 rows; its body holds offsets 0, 6, 4 (decreasing) then values.
  craft::FlatBufferBuilder b;
  auto bytes = craft::schema_message();
  craft::append(
      bytes,
      craft::message(b, craft::header_id(craft::fb::MessageHeader::RecordBatch),
                     craft::record_batch_table(b, 2, {{2, 0}, {6, 0}}, {{0, 0}, {0, 12}, {16, 24}}), 40));
  const auto body = bytes.size();
  bytes.resize(bytes.size() + 40, 0);
  const std::int32_t offsets[3] = {0, 6, 4};
  std::memcpy(bytes.data() + body, offsets, sizeof offsets);
  craft::append(bytes, craft::end_of_stream());
  const Written w(bytes);
  REQUIRE(w.count().has_value());  // without --verify the body is never read
  const auto c = w.count(true);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().what == "offsets of column 'input_ids' decrease at row 1 (4 after 6)");
  CHECK(c.error().where == w.at(body + 8));

  const std::int32_t past[3] = {0, 6, 9};  // 9 > the 6 values
  std::memcpy(bytes.data() + body, past, sizeof past);
  const Written w2(bytes);
  const auto d = w2.count(true);
  REQUIRE_FALSE(d.has_value());
  CHECK(d.error().what == "last offset 9 of column 'input_ids' is past its 6 values");
}

TEST_CASE("dataset hostile: a schema nested a thousand levels deep") {
  craft::Bytes bytes = craft::schema_message(1000);
  craft::append(bytes, craft::end_of_stream());
  const Written w(bytes);
  const auto c = w.count();
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().where == w.at(0));
}

TEST_CASE("dataset hostile: old metadata versions and foreign message types") {
  {
    craft::FlatBufferBuilder b;
    const auto s = craft::schema_table(b, {craft::list_field(b, "input_ids")});
    auto bytes = craft::message(b, craft::header_id(craft::fb::MessageHeader::Schema), s, 0,
                                static_cast<std::int16_t>(craft::fb::MetadataVersion::V3));
    craft::append(bytes, craft::end_of_stream());
    const Written w(bytes);
    const auto c = w.count();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what == "unsupported Arrow metadata version V3");
  }
  {
    craft::FlatBufferBuilder b;
    auto bytes = craft::schema_message();
    craft::append(bytes, craft::message(b, craft::header_id(craft::fb::MessageHeader::Tensor),
                                        craft::empty_table(b), 0));
    craft::append(bytes, craft::end_of_stream());
    const Written w(bytes);
    const auto c = w.count();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what == "unsupported Arrow message type 4");
  }
  {
    // A record batch before any schema.
    const Written w([] {
      auto bytes = craft::list_batch_message(1, 1);
      bytes.resize(bytes.size() + static_cast<std::size_t>(craft::list_body_length(1, 1)), 0);
      craft::append(bytes, craft::end_of_stream());
      return bytes;
    }());
    const auto c = w.count();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what == "invalid Arrow message: record batch before the schema");
  }
}

TEST_CASE("dataset hostile: file footers that repeat, overlap or point outside the data") {
  // Two real record batches of 2 rows x 3 tokens, after the 8-byte magic.
  craft::Bytes body = craft::schema_message();
  const auto schema_len = body.size();
  std::vector<craft::Block> blocks;
  for (int i = 0; i < 2; ++i) {
    const auto m = craft::list_batch_message(2, 3);
    blocks.push_back({static_cast<std::int64_t>(8 + body.size()), static_cast<std::int32_t>(m.size()), 0,
                      craft::list_body_length(2, 3)});
    craft::append(body, m);
    body.resize(body.size() + static_cast<std::size_t>(craft::list_body_length(2, 3)), 0);
  }
  craft::append(body, craft::end_of_stream());
  {
    const Written w(craft::file_with_footer(body, blocks));
    const auto c = w.count();
    REQUIRE(c.has_value());
    CHECK(c->rows == 4);
    CHECK(c->tokens == 12);
  }
  const auto expect_footer_error = [](const std::vector<craft::Block>& bad, const craft::Bytes& data) {
    const Written w(craft::file_with_footer(data, bad));
    const auto c = w.count();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().what.find("footer") != std::string::npos);
    CHECK(c.error().where.starts_with(w.file.string() + ":offset "));
  };
  expect_footer_error({blocks[0], blocks[0]}, body);  // the same block twice: a loop
  expect_footer_error({blocks[1], blocks[0]}, body);  // backwards
  auto past = blocks[1];
  past.body_length += 1000;  // runs into the footer
  expect_footer_error({blocks[0], past}, body);
  auto schema_block = blocks[0];
  schema_block.offset = 8;  // points at the schema message, not a record batch
  schema_block.metadata_length = static_cast<std::int32_t>(schema_len);
  schema_block.body_length = 0;
  expect_footer_error({schema_block}, body);
}

TEST_CASE("dataset hostile: pre-0.15 streams without the continuation marker still count") {
  // The legacy framing: i32 metadata length, metadata, body; end marker: four zero bytes.
  craft::Bytes bytes;
  const auto schema = craft::schema_message();
  bytes.insert(bytes.end(), schema.begin() + 4, schema.end());
  for (int i = 0; i < 3; ++i) {
    const auto batch = craft::list_batch_message(5, 2);
    bytes.insert(bytes.end(), batch.begin() + 4, batch.end());
    bytes.resize(bytes.size() + static_cast<std::size_t>(craft::list_body_length(5, 2)), 0);
  }
  bytes.insert(bytes.end(), 4, 0);
  const Written w(bytes);
  const auto c = w.count();
  REQUIRE(c.has_value());
  CHECK(c->rows == 15);
  CHECK(c->tokens == 30);
}

// Issue 31: a state.json of 200,000 shards took 20 s before its first error (nlohmann's callback
// parser looked through the shard list after every entry). The list is read whole and in order:
// 200,000 names (hard links to a few copies of one shard, the last a different one) give the sum of their
// counts, and a repeat at the end of the list is found.
TEST_CASE("dataset hostile: a state.json of 200,000 shards is read whole, in order") {
  constexpr int shards = 200'000;
  const trnslurm::test::ScratchDir dir;
  const auto write = [&](const std::string& name, const craft::Bytes& bytes) {
    trnslurm::test::write_bytes(dir.path() / name, reinterpret_cast<const char*>(bytes.data()), bytes.size());
  };
  // ext4 allows 65,000 links to a file: one copy per 50,000 names.
  for (int copy = 0; copy < shards / 50'000; ++copy)
    write(fmt::format("three-rows-{}.arrow", copy), stream({{3, 4}}));
  const auto name = [](int i) { return fmt::format("data-{:06}.arrow", i); };
  for (int i = 0; i < shards - 1; ++i)
    std::filesystem::create_hard_link(dir.path() / fmt::format("three-rows-{}.arrow", i / 50'000),
                                      dir.path() / name(i));
  write(name(shards - 1), stream({{5, 4}}));
  const auto state_json = [&](const std::string& last) {
    std::string state = "{\"_data_files\": [";
    for (int i = 0; i < shards - 1; ++i) state += fmt::format("{{\"filename\": \"{}\"}}, ", name(i));
    state += fmt::format("{{\"filename\": \"{}\"}}], \"_split\": \"train\"}}", last);
    trnslurm::test::write_bytes(dir.path() / "state.json", state.data(), state.size());
  };
  state_json(name(shards - 1));
  const auto c = count_dataset({.path = dir.path()});
  REQUIRE(c.has_value());
  CHECK(c->files == shards);
  CHECK(c->rows == 3u * (shards - 1) + 5);
  CHECK(c->tokens == 12u * (shards - 1) + 20);

  state_json(name(0));
  const auto twice = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(twice);
  CHECK(twice.error().what == "shard 'data-000000.arrow' is listed twice in '_data_files'");
}

TEST_CASE("dataset hostile: a state.json past a million values, or broken, is refused before it is built") {
  const trnslurm::test::ScratchDir dir;
  std::string many = "{\"_data_files\": [";
  for (int i = 0; i < 1'100'000; ++i) many += i == 0 ? "0" : ",0";
  many += "]}";
  trnslurm::test::write_bytes(dir.path() / "state.json", many.data(), many.size());
  const auto refused = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what == "more than 1000000 JSON values: not read into memory");
  CHECK(refused.error().where == (dir.path() / "state.json").string());
  // A million values exactly are read (and then refused for what they are, not for their number).
  std::string limit = "{\"_data_files\": [";
  for (int i = 0; i < 999'998; ++i) limit += i == 0 ? "0" : ",0";
  limit += "]}";
  trnslurm::test::write_bytes(dir.path() / "state.json", limit.data(), limit.size());
  const auto read = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(read);
  CHECK(read.error().what == "an entry of '_data_files' has no \"filename\" string");

  const std::string broken = "{\"_data_files\": [1, }";
  trnslurm::test::write_bytes(dir.path() / "state.json", broken.data(), broken.size());
  const auto syntax = count_dataset({.path = dir.path()});
  REQUIRE_FALSE(syntax);
  CHECK(syntax.error().what.starts_with("not valid JSON: "));
  CHECK(syntax.error().where == (dir.path() / "state.json").string() + ":offset 20");  // the '}'
}
