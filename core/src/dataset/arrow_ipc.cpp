#include "arrow_ipc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "dataset_file.hpp"
#include "trnslurm/util/checked.hpp"

namespace trnslurm::dataset {
namespace {

namespace fb = arrow_fb;
using fb::MessageHeader;

constexpr std::uint32_t continuation_marker = 0xFFFFFFFFu;
// Bytes read at once: the first read of a file takes the schema (Hugging Face's carries the
// features as JSON) and, in small shards, the batches after it; later reads take one record
// batch's metadata. Reading more costs copies and page-cache lookups of body bytes never used.
constexpr std::uint64_t first_read = 4096;
constexpr std::uint64_t next_read = 512;
// Token offsets are read in slices of this many bytes under --verify.
constexpr std::size_t offsets_slice = std::size_t{64} * 1024;
constexpr std::string_view arrow_corrupt_hint = "the file is damaged or not an Arrow IPC file: regenerate it";

struct Message {
  MessageHeader type = MessageHeader::NONE;
  std::uint64_t offset = 0;
  std::uint64_t metadata_end = 0;  // where the body starts
  std::uint64_t body_length = 0;
  std::uint64_t next = 0;
  // Schema
  std::optional<TokenLayout> schema;
  // RecordBatch
  std::uint64_t length = 0;
  bool compressed = false;
  std::optional<std::uint64_t> values_length;                             // the token column's values node
  std::optional<std::pair<std::uint64_t, std::uint64_t>> offsets_buffer;  // (offset, length) in the body
};

class Reader {
 public:
  Reader(const ReadOnlyFile& file, const ArrowOptions& options) : file_(file), options_(options) {}

  // [offset, offset + length) of the file, served from the last read when it holds them; else
  // one read of at least that much (a first read takes the schema, later ones a batch's metadata).
  Result<const std::byte*> fetch(std::uint64_t offset, std::uint64_t length, std::string_view what) {
    if (window_read_ && offset >= window_start_ && offset - window_start_ <= window_.size() &&
        length <= window_.size() - (offset - window_start_)) {
      return window_.data() + (offset - window_start_);
    }
    if (!file_.contains(offset, length)) return std::unexpected(file_.past_end(offset, length, what));
    const std::uint64_t want = std::max<std::uint64_t>(length, window_read_ ? next_read : first_read);
    window_.resize(static_cast<std::size_t>(std::min(want, file_.size() - offset)));
    window_read_ = false;
    if (auto r = file_.read(offset, window_, what); !r) return std::unexpected(r.error());
    window_start_ = offset;
    window_read_ = true;
    return window_.data();
  }

  Error error(std::uint64_t offset, std::string what, std::string_view hint = arrow_corrupt_hint) const {
    return Error{std::move(what), where(file_.path(), offset), std::string(hint)};
  }

  // The message at offset, messages ending at or before limit; nullopt at the end-of-stream marker.
  // Every writer ends a stream with that marker: a stream without it was cut short, perhaps
  // exactly between two record batches, and counting it would silently lose rows.
  Result<std::optional<Message>> message(std::uint64_t offset, std::uint64_t limit,
                                         const TokenLayout* layout) {
    const std::uint64_t avail = limit - offset;
    if (avail < 4) {
      return std::unexpected(file_.past_end(offset, 4, "the next Arrow message or the end-of-stream marker"));
    }
    auto head = fetch(offset, 4, "an Arrow message prefix");
    if (!head) return std::unexpected(head.error());
    std::uint64_t prefix = 4;
    auto metadata_length = load<std::int32_t>(*head);
    if (load<std::uint32_t>(*head) == continuation_marker) {
      if (avail < 8) return std::unexpected(file_.past_end(offset, 8, "an Arrow message prefix"));
      head = fetch(offset, 8, "an Arrow message prefix");
      if (!head) return std::unexpected(head.error());
      prefix = 8;
      metadata_length = load<std::int32_t>(*head + 4);
    }
    if (metadata_length == 0) return std::optional<Message>{};  // end-of-stream marker
    if (metadata_length < 0 || static_cast<std::uint64_t>(metadata_length) > max_arrow_metadata) {
      return std::unexpected(
          error(offset, fmt::format("invalid Arrow message metadata length {}", metadata_length)));
    }
    const auto meta_len = static_cast<std::uint64_t>(metadata_length);
    if (meta_len > avail - prefix) {
      return std::unexpected(file_.past_end(offset + prefix, meta_len, "an Arrow message's metadata"));
    }
    auto bytes = fetch(offset + prefix, meta_len, "an Arrow message's metadata");
    if (!bytes) return std::unexpected(bytes.error());
    // flatbuffers reads scalars in place: the metadata gets a buffer of its own, 16-byte aligned.
    meta_.assign(*bytes, *bytes + meta_len);
    const std::span<const std::byte> meta(meta_.data(), meta_.size());

    Message m;
    m.offset = offset;
    m.metadata_end = offset + prefix + meta_len;
    flatbuffers::Verifier verifier(reinterpret_cast<const std::uint8_t*>(meta.data()), meta.size(),
                                   fb::verifier_options());
    const auto bad = [&](std::string_view what) {
      return std::unexpected(error(offset, fmt::format("invalid Arrow message: {}", what)));
    };
    const auto root = fb::Table::root(verifier, meta);
    if (!root || !root->present()) return bad("not a Message flatbuffer");
    const auto version = root->scalar<std::int16_t>(fb::message_version, 0);
    const auto type = root->scalar<std::uint8_t>(fb::message_header_type, 0);
    const auto header = root->table(fb::message_header);
    const auto body_length = root->scalar<std::int64_t>(fb::message_body_length, 0);
    if (!version || !type || !header || !body_length) return bad("malformed Message table");
    if (*version != fb::metadata_v4 && *version != fb::metadata_v5) {
      return std::unexpected(error(offset,
                                   fmt::format("unsupported Arrow metadata version V{}", *version + 1),
                                   "trnslurm reads Arrow metadata V4 and V5 (Arrow 0.8 and later)"));
    }
    if (*body_length < 0) return bad(fmt::format("negative body length {}", *body_length));
    m.body_length = static_cast<std::uint64_t>(*body_length);
    if (m.body_length > limit - m.metadata_end) {
      return std::unexpected(file_.past_end(m.metadata_end, m.body_length, "an Arrow message body"));
    }
    m.next = m.metadata_end + m.body_length;
    m.type = static_cast<MessageHeader>(*type);
    if (!header->present() && m.type != MessageHeader::NONE) return bad("message without its header table");

    switch (m.type) {
      case MessageHeader::Schema: {
        auto s = parse_schema(*header, options_.token_column);
        if (!s) return bad(s.error());
        m.schema = std::move(*s);
        break;
      }
      case MessageHeader::RecordBatch: {
        if (auto r = record_batch(*header, layout, m); !r) return bad(r.error());
        break;
      }
      case MessageHeader::DictionaryBatch:
        break;  // dictionaries hold no rows
      default:
        return std::unexpected(
            error(offset, fmt::format("unsupported Arrow message type {}", *type),
                  "a dataset shard holds a Schema, then RecordBatch and DictionaryBatch messages"));
    }
    return std::optional<Message>(std::move(m));
  }

  // Reads the token column's offsets of one record batch (--verify); returns its tokens.
  Result<std::uint64_t> verify_offsets(const Message& m, const TokenLayout& layout) {
    const bool large = layout.kind == TokenKind::large_list;
    const std::uint64_t width = large ? 8 : 4;
    if (m.length == 0) return std::uint64_t{0};
    if (m.compressed) {
      return std::unexpected(error(m.offset, "--verify cannot read a compressed record batch body",
                                   "write the dataset without IPC compression, or count without --verify"));
    }
    if (!m.offsets_buffer) {
      return std::unexpected(error(
          m.offset,
          fmt::format("cannot locate the offsets of column '{}' in the record batch", options_.token_column),
          "a column before it has a layout trnslurm does not walk (union or view)"));
    }
    const auto [buf_offset, buf_length] = *m.offsets_buffer;
    std::uint64_t needed = 0;
    if (mul_overflows(m.length + 1, width, needed) || buf_length < needed) {
      return std::unexpected(
          error(m.offset, fmt::format("offsets buffer of column '{}' holds {} bytes, {} rows need {}",
                                      options_.token_column, buf_length, m.length, needed)));
    }
    const std::uint64_t start = m.metadata_end + buf_offset;
    std::int64_t first = 0, previous = 0;
    std::vector<std::byte> slice;
    for (std::uint64_t i = 0; i <= m.length;) {
      const std::uint64_t n = std::min<std::uint64_t>(m.length + 1 - i, offsets_slice / width);
      slice.resize(static_cast<std::size_t>(n * width));
      if (auto r = file_.read(start + i * width, slice, "token offsets"); !r)
        return std::unexpected(r.error());
      for (std::uint64_t k = 0; k < n; ++k, ++i) {
        const std::byte* p = slice.data() + k * width;
        const std::int64_t v = large ? load<std::int64_t>(p) : load<std::int32_t>(p);
        const std::uint64_t at = start + i * width;
        if (i == 0) {
          if (v < 0) return std::unexpected(error(at, fmt::format("negative first offset {}", v)));
          first = previous = v;
          continue;
        }
        if (v < previous) {
          return std::unexpected(
              error(at, fmt::format("offsets of column '{}' decrease at row {} ({} after {})",
                                    options_.token_column, i - 1, v, previous)));
        }
        const auto row_tokens = static_cast<std::uint64_t>(v - previous);
        if (options_.seq_len && row_tokens != *options_.seq_len) {
          return std::unexpected(
              error(at,
                    fmt::format("row {} of the record batch at offset {} holds {} tokens in column '{}', not "
                                "seq_len {}",
                                i - 1, m.offset, row_tokens, options_.token_column, *options_.seq_len),
                    "pack or truncate the dataset to seq_len tokens per row, or set seq_len to match it"));
        }
        previous = v;
      }
    }
    if (m.values_length && static_cast<std::uint64_t>(previous) > *m.values_length) {
      return std::unexpected(error(start, fmt::format("last offset {} of column '{}' is past its {} values",
                                                      previous, options_.token_column, *m.values_length)));
    }
    return static_cast<std::uint64_t>(previous - first);
  }

 private:
  std::expected<void, std::string> record_batch(const fb::Table& rb, const TokenLayout* layout, Message& m) {
    const auto length = rb.scalar<std::int64_t>(fb::record_batch_length, 0);
    const auto compression = rb.table(fb::record_batch_compression);
    const auto nodes = rb.structs(fb::record_batch_nodes, fb::field_node_size);
    const auto buffers = rb.structs(fb::record_batch_buffers, fb::buffer_size);
    if (!length || !compression || !nodes || !buffers) return std::unexpected("malformed RecordBatch table");
    if (*length < 0) return std::unexpected(fmt::format("negative record batch length {}", *length));
    m.length = static_cast<std::uint64_t>(*length);
    m.compressed = compression->present();
    if (!layout) return std::unexpected("record batch before the schema");
    const std::size_t node_count = nodes->size() / fb::field_node_size;
    const std::size_t buffer_count = buffers->size() / fb::buffer_size;
    if (node_count < layout->top_level_fields) {
      return std::unexpected(fmt::format("record batch has {} field nodes, the schema has {} columns",
                                         node_count, layout->top_level_fields));
    }
    const bool listlike = layout->kind == TokenKind::list || layout->kind == TokenKind::large_list ||
                          layout->kind == TokenKind::fixed_size_list;
    if (!listlike || !layout->node_index) return {};
    const std::size_t ni = *layout->node_index;
    if (ni + 1 >= node_count) return std::unexpected("record batch lacks the token column's field nodes");
    const auto column_length = load<std::int64_t>(nodes->data() + ni * fb::field_node_size);
    const auto values_length = load<std::int64_t>(nodes->data() + (ni + 1) * fb::field_node_size);
    if (column_length != *length) {
      return std::unexpected(fmt::format("column '{}' has {} rows in a record batch of {}",
                                         options_.token_column, column_length, *length));
    }
    if (values_length < 0) return std::unexpected("negative field node length");
    m.values_length = static_cast<std::uint64_t>(values_length);
    if (layout->kind == TokenKind::fixed_size_list) {
      std::uint64_t expected = 0;
      if (mul_overflows(m.length, layout->list_size, expected) || expected != *m.values_length) {
        return std::unexpected(fmt::format("column '{}' ({}) has {} values for {} rows",
                                           options_.token_column, layout->type, values_length, m.length));
      }
      return {};
    }
    if (layout->buffer_index && *layout->buffer_index + 1 < buffer_count) {
      const std::byte* b = buffers->data() + (*layout->buffer_index + 1) * fb::buffer_size;
      const auto off = load<std::int64_t>(b);
      const auto len = load<std::int64_t>(b + 8);
      std::uint64_t end = 0;
      if (off < 0 || len < 0 ||
          add_overflows(static_cast<std::uint64_t>(off), static_cast<std::uint64_t>(len), end) ||
          end > m.body_length) {
        return std::unexpected(
            fmt::format("buffer [{}, +{}) lies outside the {}-byte body", off, len, m.body_length));
      }
      m.offsets_buffer = {static_cast<std::uint64_t>(off), static_cast<std::uint64_t>(len)};
    }
    return {};
  }

  const ReadOnlyFile& file_;
  const ArrowOptions& options_;
  std::vector<std::byte> window_;
  std::uint64_t window_start_ = 0;
  bool window_read_ = false;
  std::vector<std::byte> meta_;
};

class Counter {
 public:
  Result<ArrowFileCount> run() {
    if (file_.size() >= 6) {
      auto magic = reader_.fetch(0, 6, "the file's magic");
      if (!magic) return std::unexpected(magic.error());
      if (std::memcmp(*magic, "ARROW1", 6) == 0) return file();
    }
    return stream();
  }

  Counter(const ReadOnlyFile& file, const ArrowOptions& options)
      : file_(file), options_(options), reader_(file, options) {}

  Result<void> schema(TokenLayout layout, std::uint64_t at) {
    if (options_.seq_len && layout.kind == TokenKind::fixed_size_list &&
        layout.list_size != *options_.seq_len) {
      return std::unexpected(
          reader_.error(at,
                        fmt::format("column '{}' is {}: every row holds {} tokens, not seq_len {}",
                                    options_.token_column, layout.type, layout.list_size, *options_.seq_len),
                        "set seq_len to the dataset's row length, or re-pack the dataset to seq_len"));
    }
    count_.layout = std::move(layout);
    return {};
  }

  Result<void> batch(const Message& m) {
    if (add_overflows(count_.rows, m.length, count_.rows)) {
      return std::unexpected(reader_.error(m.offset, "row count overflows 64 bits"));
    }
    ++count_.batches;
    if (m.values_length && add_overflows(count_.token_values, *m.values_length, count_.token_values)) {
      return std::unexpected(reader_.error(m.offset, "token count overflows 64 bits"));
    }
    const auto kind = count_.layout.kind;
    if (options_.verify && (kind == TokenKind::list || kind == TokenKind::large_list)) {
      auto tokens = reader_.verify_offsets(m, count_.layout);
      if (!tokens) return std::unexpected(tokens.error());
      count_.verified_tokens = count_.verified_tokens.value_or(0) + *tokens;
    }
    return {};
  }

  Result<ArrowFileCount> stream() {
    std::uint64_t offset = 0;
    bool have_schema = false;
    for (;;) {
      auto m = reader_.message(offset, file_.size(), have_schema ? &count_.layout : nullptr);
      if (!m) return std::unexpected(m.error());
      if (!*m) break;
      if ((*m)->type == MessageHeader::Schema) {
        if (have_schema)
          return std::unexpected(reader_.error(offset, "a second Schema message in the stream"));
        if (auto r = schema(std::move(*(*m)->schema), offset); !r) return std::unexpected(r.error());
        have_schema = true;
      } else if ((*m)->type == MessageHeader::RecordBatch) {
        if (auto r = batch(**m); !r) return std::unexpected(r.error());
      }
      offset = (*m)->next;  // strictly after this message: a stream cannot loop
    }
    if (!have_schema) {
      return std::unexpected(reader_.error(offset, "no Arrow schema: empty or not an Arrow IPC stream",
                                           "a save_to_disk shard starts with a Schema message"));
    }
    return count_;
  }

  Result<ArrowFileCount> file() {
    count_.file_format = true;
    constexpr std::uint64_t trailer = 10;  // i32 footer length + "ARROW1"
    const std::uint64_t size = file_.size();
    if (size < 8 + trailer)
      return std::unexpected(file_.past_end(0, 8 + trailer, "an Arrow file's magic and footer"));
    std::array<std::byte, trailer> tail{};
    if (auto r = file_.read(size - trailer, tail, "the Arrow file trailer"); !r)
      return std::unexpected(r.error());
    if (std::memcmp(tail.data() + 4, "ARROW1", 6) != 0) {
      return std::unexpected(reader_.error(size - 6, "Arrow file without its closing ARROW1 magic: truncated",
                                           "the file was cut short: copy or regenerate it"));
    }
    const auto footer_length = load<std::int32_t>(tail.data());
    if (footer_length <= 0 || static_cast<std::uint64_t>(footer_length) > max_arrow_metadata ||
        static_cast<std::uint64_t>(footer_length) > size - 8 - trailer) {
      return std::unexpected(
          reader_.error(size - trailer, fmt::format("invalid Arrow footer length {}", footer_length)));
    }
    const std::uint64_t footer_start = size - trailer - static_cast<std::uint64_t>(footer_length);
    std::vector<std::byte> footer(static_cast<std::size_t>(footer_length));
    if (auto r = file_.read(footer_start, footer, "the Arrow footer"); !r) return std::unexpected(r.error());
    flatbuffers::Verifier verifier(reinterpret_cast<const std::uint8_t*>(footer.data()), footer.size(),
                                   fb::verifier_options());
    const auto bad = [&](std::string_view what) {
      return std::unexpected(reader_.error(footer_start, fmt::format("invalid Arrow footer: {}", what)));
    };
    const auto root = fb::Table::root(verifier, footer);
    if (!root || !root->present()) return bad("not a Footer flatbuffer");
    const auto schema_table = root->table(fb::footer_schema);
    const auto blocks = root->structs(fb::footer_record_batches, fb::block_size);
    if (!schema_table || !blocks) return bad("malformed Footer table");
    if (!schema_table->present()) return bad("no schema");
    auto layout = parse_schema(*schema_table, options_.token_column);
    if (!layout) return bad(layout.error());
    if (auto r = schema(std::move(*layout), footer_start); !r) return std::unexpected(r.error());

    // Blocks in file order, each after the previous one: overlapping or repeated blocks (a loop
    // in a hostile footer) are refused rather than counted twice.
    std::uint64_t previous_end = 8;
    const std::size_t n = blocks->size() / fb::block_size;
    for (std::size_t i = 0; i < n; ++i) {
      const std::byte* b = blocks->data() + i * fb::block_size;
      const auto offset = load<std::int64_t>(b);
      const auto meta = load<std::int32_t>(b + 8);
      const auto body = load<std::int64_t>(b + 16);
      std::uint64_t end = 0;
      if (offset < 0 || meta <= 0 || body < 0 || static_cast<std::uint64_t>(offset) < previous_end ||
          add_overflows(static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(meta), end) ||
          add_overflows(end, static_cast<std::uint64_t>(body), end) || end > footer_start) {
        return bad(
            fmt::format("record batch block {} (offset {}, metadata {}, body {}) is out of order or outside "
                        "the data before the footer at {}",
                        i, offset, meta, body, footer_start));
      }
      const auto at = static_cast<std::uint64_t>(offset);
      auto m = reader_.message(at, end, &count_.layout);
      if (!m) return std::unexpected(m.error());
      if (!*m || (*m)->type != MessageHeader::RecordBatch || (*m)->next != end ||
          (*m)->metadata_end != at + static_cast<std::uint64_t>(meta)) {
        return std::unexpected(reader_.error(
            at, fmt::format("the footer's record batch block {} does not match the message there", i)));
      }
      if (auto r = batch(**m); !r) return std::unexpected(r.error());
      previous_end = end;
    }
    return count_;
  }

 private:
  const ReadOnlyFile& file_;
  const ArrowOptions& options_;
  Reader reader_;
  ArrowFileCount count_;
};

}  // namespace

Result<ArrowFileCount> count_arrow(const std::filesystem::path& path, const ArrowOptions& options) {
  auto file = ReadOnlyFile::open(path);
  if (!file) return std::unexpected(file.error());
  return count_arrow(*file, options);
}

Result<ArrowFileCount> count_arrow(const ReadOnlyFile& file, const ArrowOptions& options) {
  Counter counter(file, options);
  return counter.run();
}

}  // namespace trnslurm::dataset
