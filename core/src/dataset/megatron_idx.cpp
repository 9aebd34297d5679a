#include "megatron_idx.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <system_error>

#include "dataset_file.hpp"
#include "trnslurm/util/checked.hpp"

namespace trnslurm::dataset {
namespace {

// Layout (Megatron-LM megatron/core/datasets/indexed_dataset.py), little-endian, unaligned:
// magic[9] "MMIDIDX\0\0", version u64 = 1, dtype code u8, sequence count S u64, document count D u64,
// then sizes i32[S], pointers i64[S], document_indices i64[D].
constexpr std::array<char, 9> magic = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
constexpr std::uint64_t header_size = 34;
constexpr std::size_t slice_entries = std::size_t{16} * 1024;  // entries per read of an array

// Bytes per token of each dtype code. 6 and 7 are floats (and changed meaning across versions):
// never tokens.
std::uint64_t item_size(std::uint8_t code) {
  switch (code) {
    case 1:  // uint8
    case 2:  // int8
      return 1;
    case 3:  // int16
    case 8:  // uint16
      return 2;
    case 4:
      return 4;  // int32
    case 5:
      return 8;  // int64
    default:
      return 0;
  }
}

constexpr std::string_view megatron_corrupt_hint =
    "the .idx file is damaged or not a Megatron indexed dataset: rebuild it";

// Walks an array of T at offset in slices, calling f(index, value, byte offset) until it fails.
template <class T, class F>
Result<void> each(const ReadOnlyFile& file, std::uint64_t offset, std::uint64_t count, std::string_view what,
                  F&& f) {
  std::vector<std::byte> slice;
  for (std::uint64_t i = 0; i < count;) {
    const std::uint64_t n = std::min<std::uint64_t>(count - i, slice_entries);
    slice.resize(static_cast<std::size_t>(n * sizeof(T)));
    const std::uint64_t at = offset + i * sizeof(T);
    if (auto r = file.read(at, slice, what); !r) return r;
    for (std::uint64_t k = 0; k < n; ++k, ++i) {
      if (auto r = f(i, load<T>(slice.data() + k * sizeof(T)), at + k * sizeof(T)); !r) return r;
    }
  }
  return {};
}

}  // namespace

std::optional<std::uint64_t> token_bytes(std::uint64_t tokens, std::uint8_t dtype_code) {
  std::uint64_t bytes = 0;
  if (item_size(dtype_code) == 0 || mul_overflows(tokens, item_size(dtype_code), bytes)) return std::nullopt;
  return bytes;
}

Result<MegatronCount> count_megatron(const std::filesystem::path& idx, bool verify) {
  auto opened = ReadOnlyFile::open(idx);
  if (!opened) return std::unexpected(opened.error());
  const ReadOnlyFile& file = *opened;
  const auto error = [&](std::uint64_t at, std::string what, std::string_view hint = megatron_corrupt_hint) {
    return std::unexpected(Error{std::move(what), where(idx, at), std::string(hint)});
  };
  std::array<std::byte, header_size> h{};
  if (auto r = file.read(0, h, "the Megatron .idx header"); !r) return std::unexpected(r.error());
  if (std::memcmp(h.data(), magic.data(), magic.size()) != 0) {
    return error(0, "not a Megatron indexed dataset: the file does not start with MMIDIDX",
                 "give the .idx file (or its prefix) written by Megatron's preprocess_data.py");
  }
  const auto version = load<std::uint64_t>(h.data() + 9);
  if (version != 1) {
    return error(9, fmt::format("unsupported MMIDIDX version {}", version), "trnslurm reads version 1");
  }
  MegatronCount count;
  count.dtype_code = load<std::uint8_t>(h.data() + 17);
  const std::uint64_t width = item_size(count.dtype_code);
  if (width == 0) {
    return error(17, fmt::format("dtype code {} is not an integer token type", count.dtype_code),
                 "token dtype codes are 1 (uint8), 2 (int8), 3 (int16), 4 (int32), 5 (int64), 8 (uint16)");
  }
  const auto S = load<std::uint64_t>(h.data() + 18);
  const auto D = load<std::uint64_t>(h.data() + 26);
  // 34 + 12 S + 8 D must be the file size; bound S and D first so the arithmetic cannot wrap.
  const std::uint64_t size = file.size();
  if (S > size / 12 || D > size / 8 || header_size + 12 * S + 8 * D != size) {
    return error(
        18,
        fmt::format("header says {} sequences and {} documents, which needs {} bytes, but the file has {}", S,
                    D,
                    S > size / 12 || D > size / 8 ? std::string("more than that")
                                                  : std::to_string(header_size + 12 * S + 8 * D),
                    size),
        "the .idx file is truncated or its header is damaged: rebuild it");
  }
  if (D == 0) return error(26, "no document indices (a valid index has at least [0])");
  count.sequences = S;
  count.documents = D - 1;

  auto sizes =
      each<std::int32_t>(file, header_size, S, "sequence lengths",
                         [&](std::uint64_t i, std::int32_t v, std::uint64_t at) -> Result<void> {
                           if (v < 0) return error(at, fmt::format("sequence {} has length {}", i, v));
                           if (add_overflows(count.tokens, static_cast<std::uint64_t>(v), count.tokens))
                             return error(at, "the sequence lengths add up to more than 2^64 tokens");
                           return {};
                         });
  if (!sizes) return std::unexpected(sizes.error());

  const std::uint64_t docs_at = header_size + 12 * S;
  std::array<std::byte, 8> v{};
  if (auto r = file.read(docs_at, v, "the first document index"); !r) return std::unexpected(r.error());
  if (load<std::int64_t>(v.data()) != 0) {
    return error(docs_at, fmt::format("first document index is {}, not 0", load<std::int64_t>(v.data())));
  }
  const std::uint64_t last_at = docs_at + 8 * (D - 1);
  if (auto r = file.read(last_at, v, "the last document index"); !r) return std::unexpected(r.error());
  if (const auto last = load<std::int64_t>(v.data()); last < 0 || static_cast<std::uint64_t>(last) != S) {
    return error(last_at, fmt::format("last document index is {}, not the sequence count {}", last, S));
  }

  if (verify) {
    // pointers[i] = bytes of the sequences before i: pointers start at 0 and grow by sizes * width.
    std::uint64_t expected = 0;
    std::vector<std::byte> lengths;
    auto pointers = each<std::int64_t>(
        file, header_size + 4 * S, S, "sequence pointers",
        [&](std::uint64_t i, std::int64_t p, std::uint64_t at) -> Result<void> {
          if (p < 0 || static_cast<std::uint64_t>(p) != expected) {
            return error(at, fmt::format("pointer of sequence {} is {}, the lengths before it make {}", i, p,
                                         expected));
          }
          // The lengths are read in slices that run along with the pointers' slices.
          if (i % slice_entries == 0) {
            lengths.resize(static_cast<std::size_t>(std::min<std::uint64_t>(S - i, slice_entries) * 4));
            if (auto r = file.read(header_size + 4 * i, lengths, "sequence lengths"); !r) return r;
          }
          const auto length =
              static_cast<std::uint64_t>(load<std::int32_t>(lengths.data() + (i % slice_entries) * 4));
          if (add_overflows(expected, saturating_mul(length, width), expected))
            return error(at, fmt::format("the sequences before {} hold more than 2^64 bytes", i + 1));
          return {};
        });
    if (!pointers) return std::unexpected(pointers.error());
    std::int64_t previous = 0;
    auto docs =
        each<std::int64_t>(file, docs_at, D, "document indices",
                           [&](std::uint64_t i, std::int64_t d, std::uint64_t at) -> Result<void> {
                             if (d < previous || static_cast<std::uint64_t>(d) > S) {
                               return error(at, fmt::format("document index {} is {}: indices must grow "
                                                            "from 0 to {}",
                                                            i, d, S));
                             }
                             previous = d;
                             return {};
                           });
    if (!docs) return std::unexpected(docs.error());
  }

  // The .bin beside it holds exactly the tokens; it is often absent where only the plan is made.
  auto bin = idx;
  bin.replace_extension(".bin");
  std::error_code ec;
  const auto bin_size = std::filesystem::file_size(bin, ec);
  if (ec) {
    count.warnings.push_back(fmt::format("{}: not found or unreadable ({}): only the .idx was counted",
                                         bin.string(), ec.message()));
  } else if (const auto bytes = token_bytes(count.tokens, count.dtype_code); !bytes || bin_size != *bytes) {
    return std::unexpected(Error{
        fmt::format("the .bin holds {} bytes but the .idx counts {} tokens of {} bytes ({} bytes)", bin_size,
                    count.tokens, width, bytes ? std::to_string(*bytes) : std::string("more than 2^64")),
        where(bin, bin_size), "the .bin and .idx do not belong together: rebuild both"});
  }
  return count;
}

}  // namespace trnslurm::dataset
