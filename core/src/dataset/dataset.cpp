#include "trnslurm/dataset/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <system_error>

#include "dataset_file.hpp"
#include "dataset_hf.hpp"
#include "dataset_shards.hpp"
#include "megatron_idx.hpp"
#include "trnslurm/util/enum_names.hpp"

namespace trnslurm {
namespace {

namespace fs = std::filesystem;

bool ends_with(const fs::path& p, std::string_view suffix) {
  return p.native().ends_with(suffix);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// A Megatron dataset is named by its prefix (as in Megatron's --data-path), its .idx or its .bin.
fs::path megatron_idx(const fs::path& p) {
  if (ends_with(p, ".idx")) return p;
  if (ends_with(p, ".bin")) {
    auto idx = p;
    idx.replace_extension(".idx");
    return idx;
  }
  if (is_file(p)) return p;  // an index without the usual extension (detected by its magic)
  return fs::path(p.native() + ".idx");
}

bool starts_with_mmidx(const fs::path& p) {
  auto file = dataset::ReadOnlyFile::open(p);
  if (!file || file->size() < 9) return false;
  std::array<std::byte, 9> magic{};
  return file->read(0, magic, "magic").has_value() && std::memcmp(magic.data(), "MMIDIDX\0\0", 9) == 0;
}

Result<DatasetFormat> detect(const fs::path& p) {
  std::error_code ec;
  const auto status = fs::status(p, ec);
  if (fs::is_directory(status)) {
    if (is_file(p / "dataset_dict.json")) return DatasetFormat::hf_dict;
    if (is_file(p / "state.json") || is_file(p / "dataset.arrow")) return DatasetFormat::hf;
    return fail("no dataset found in this directory: no dataset_dict.json, state.json or dataset.arrow",
                p.string(),
                "give a Hugging Face save_to_disk directory, an .arrow file or a Megatron prefix");
  }
  if (fs::is_regular_file(status)) {
    if (ends_with(p, ".idx") || ends_with(p, ".bin") || starts_with_mmidx(p)) return DatasetFormat::megatron;
    return DatasetFormat::arrow_file;
  }
  if (!fs::exists(status) && is_file(megatron_idx(p))) return DatasetFormat::megatron;
  return fail("no such dataset", p.string(), "check the path (a Megatron dataset is named by its prefix)");
}

Result<DatasetCount> count_arrow_file(const DatasetRequest& request) {
  DatasetCount out;
  out.format = DatasetFormat::arrow_file;
  dataset::ArrowShards shards(request);
  if (auto r = shards.add(request.path); !r) return std::unexpected(r.error());
  if (auto r = shards.finish(out); !r) return std::unexpected(r.error());
  return out;
}

Result<DatasetCount> count_megatron(const DatasetRequest& request) {
  auto m = dataset::count_megatron(megatron_idx(request.path), request.verify);
  if (!m) return std::unexpected(m.error());
  DatasetCount out;
  out.format = DatasetFormat::megatron;
  out.rows = m->sequences;
  out.tokens = m->tokens;
  out.files = 1;
  out.warnings = std::move(m->warnings);
  return out;
}

}  // namespace

Result<DatasetCount> count_dataset(const DatasetRequest& request) {
  if (request.path.empty()) return fail("no dataset path given", "dataset", "set the dataset's path");
  if (request.seq_len && *request.seq_len == 0) return fail("seq_len must be positive", "seq_len");
  if (request.token_column.empty()) return fail("the token column's name is empty", "token_column");
  auto format = request.format;
  if (format == DatasetFormat::automatic) {
    auto detected = detect(request.path);
    if (!detected) return std::unexpected(detected.error());
    format = *detected;
  }
  switch (format) {
    case DatasetFormat::hf:
      return dataset::count_hf(request.path, request);
    case DatasetFormat::hf_dict:
      return dataset::count_hf_dict(request.path, request);
    case DatasetFormat::megatron:
      return count_megatron(request);
    case DatasetFormat::arrow_file:
      return count_arrow_file(request);
    case DatasetFormat::automatic:
      break;
  }
  return fail("unknown dataset format", request.path.string());
}

namespace {

constexpr std::array<EnumName<DatasetFormat>, 5> format_names{{{DatasetFormat::automatic, "auto"},
                                                               {DatasetFormat::hf, "hf"},
                                                               {DatasetFormat::hf_dict, "hf-dict"},
                                                               {DatasetFormat::megatron, "megatron"},
                                                               {DatasetFormat::arrow_file, "arrow"}}};

}  // namespace

const std::vector<std::string>& dataset_format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    out.reserve(format_names.size());
    for (const auto& f : format_names) out.emplace_back(f.name);
    return out;
  }();
  return names;
}

std::optional<DatasetFormat> parse_dataset_format(std::string_view name) {
  return value_named(format_names, name);
}

std::string_view to_string(DatasetFormat format) {
  return name_of(format_names, format);
}

}  // namespace trnslurm
