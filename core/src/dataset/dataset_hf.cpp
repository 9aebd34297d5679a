#include "dataset_hf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "dataset_file.hpp"
#include "dataset_shards.hpp"

namespace trnslurm::dataset {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// state.json of 100,000 shards is a few megabytes; dataset_info.json holds the features.
constexpr std::uint64_t max_json_bytes = 64u << 20;
// Every JSON value costs tens of bytes in memory whatever it costs in the file: 64 MiB of
// "[[],[],..." are 21 million arrays, gigabytes once parsed. state.json lists two values per
// shard (200,000 for 100,000 shards) and dataset_info.json a few per feature.
constexpr std::size_t max_json_values = 1'000'000;

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// Counts the values of a JSON text without building it, and stops at the first syntax error or
// past max_json_values. A SAX pass, not a parser callback: nlohmann's callback parser looks
// through the enclosing array for a discarded value after every object, which made a state.json
// of 200,000 shards take 20 s (the square of the count) before its first error.
struct CountingSax final : json::json_sax_t {
  std::size_t values = 0;
  bool too_many = false;
  std::optional<std::pair<std::size_t, std::string>> error;  // byte, message
  bool count() {
    too_many = ++values > max_json_values;
    return !too_many;
  }
  bool null() override { return count(); }
  bool boolean(bool) override { return count(); }
  bool number_integer(json::number_integer_t) override { return count(); }
  bool number_unsigned(json::number_unsigned_t) override { return count(); }
  bool number_float(json::number_float_t, const json::string_t&) override { return count(); }
  bool string(json::string_t&) override { return count(); }
  bool binary(json::binary_t&) override { return count(); }
  bool start_object(std::size_t) override { return count(); }
  bool key(json::string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return count(); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    error = {byte, e.what()};
    return false;
  }
};

Result<json> read_json(const fs::path& file) {
  auto text = read_small_file(file, max_json_bytes);
  if (!text) return std::unexpected(text.error());
  CountingSax counter;
  if (!json::sax_parse(*text, &counter)) {
    if (counter.error)
      return fail(fmt::format("not valid JSON: {}", counter.error->second),
                  where(file, counter.error->first == 0 ? 0 : counter.error->first - 1),
                  "the file is damaged: save the dataset again");
    return fail(fmt::format("more than {} JSON values: not read into memory", max_json_values), file.string(),
                "a dataset's JSON files hold a few values per shard or feature: this one is damaged or not a "
                "dataset's; save the dataset again");
  }
  return json::parse(*text, nullptr, false);
}

// A shard or split name must name an entry of this directory: nothing that climbs out of it.
bool plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

Result<std::vector<std::string>> file_list(const json& state, const char* key, const fs::path& state_file) {
  std::vector<std::string> names;
  const auto it = state.find(key);
  if (it == state.end() || it->is_null()) return names;
  if (!it->is_array())
    return fail(fmt::format("'{}' is not a list", key), state_file.string(), "save the dataset again");
  std::set<std::string> seen;
  for (const auto& entry : *it) {
    const auto name = entry.is_object() ? entry.find("filename") : entry.end();
    if (name == entry.end() || !name->is_string()) {
      return fail(fmt::format("an entry of '{}' has no \"filename\" string", key), state_file.string(),
                  "save the dataset again");
    }
    const auto& s = name->get_ref<const std::string&>();
    if (!plain_name(s)) {
      return fail(fmt::format("shard name '{}' in '{}' is not a file name in this directory", s, key),
                  state_file.string(), "shard names must not hold '/' or be '.' or '..'");
    }
    if (!seen.insert(s).second) {
      return fail(fmt::format("shard '{}' is listed twice in '{}'", s, key), state_file.string(),
                  "each shard is counted once: save the dataset again");
    }
    names.push_back(s);
  }
  return names;
}

// dataset_info.json's count is the one datasets computed when the split was built: map, filter and
// select leave it stale, from_dict leaves it null. It is only compared, never used.
void cross_check(const fs::path& dir, std::string_view split, std::uint64_t rows, DatasetCount& out) {
  const auto info_file = dir / "dataset_info.json";
  if (!path_exists(info_file)) return;
  auto info = read_json(info_file);
  if (!info) {
    out.warnings.push_back(
        fmt::format("{}: unreadable, ignored ({})", info_file.string(), info.error().what));
    return;
  }
  const auto splits = info->find("splits");
  if (splits == info->end() || !splits->is_object() || splits->empty()) return;
  auto entry = splits->end();
  if (!split.empty()) entry = splits->find(std::string(split));
  if (entry == splits->end() && splits->size() == 1) entry = splits->begin();
  if (entry == splits->end() || !entry->is_object()) return;
  const auto n = entry->find("num_examples");
  if (n == entry->end() || !n->is_number_unsigned()) return;
  if (const auto stated = n->get<std::uint64_t>(); stated != rows) {
    out.warnings.push_back(
        fmt::format("{}: says {} examples for split '{}' but the Arrow files hold {} rows (stale after "
                    "map/filter/select); "
                    "using {}",
                    info_file.string(), stated, entry.key(), rows, rows));
  }
}

}  // namespace

Result<DatasetCount> count_hf(const fs::path& dir, const DatasetRequest& request) {
  DatasetCount out;
  out.format = DatasetFormat::hf;
  ArrowShards shards(request);
  std::string split;
  const auto state_file = dir / "state.json";
  if (path_exists(state_file)) {
    auto state = read_json(state_file);
    if (!state) return std::unexpected(state.error());
    if (!state->is_object()) return fail("not a JSON object", state_file.string(), "save the dataset again");
    if (const auto s = state->find("_split"); s != state->end() && s->is_string())
      split = s->get<std::string>();
    auto names = file_list(*state, "_data_files", state_file);
    if (!names) return std::unexpected(names.error());
    if (names->empty()) {
      return fail("state.json lists no data files", state_file.string(), "save the dataset again");
    }
    auto handle = Directory::open(dir);
    if (!handle) return std::unexpected(handle.error());
    if (auto r = shards.add_all(*handle, dir, *names); !r) return std::unexpected(r.error());
    if (auto r = shards.finish(out); !r) return std::unexpected(r.error());
    // Datasets before 2.8 could save an indices mapping (after select/shuffle) beside the data:
    // the dataset's rows are then the mapping's rows.
    auto indices = file_list(*state, "_indices_data_files", state_file);
    if (!indices) return std::unexpected(indices.error());
    if (!indices->empty()) {
      DatasetRequest plain = request;
      plain.verify = false;
      plain.seq_len.reset();
      ArrowShards mapping(plain);
      for (const auto& name : *indices) {
        if (auto r = mapping.add(dir / name); !r) return std::unexpected(r.error());
      }
      out.warnings.push_back(fmt::format("{}: an indices mapping selects {} of the {} stored rows",
                                         dir.string(), mapping.rows(), out.rows));
      out.rows = mapping.rows();
      out.tokens.reset();
      out.files += mapping.files();
    }
  } else if (path_exists(dir / "dataset.arrow")) {
    // datasets before 2.8 wrote one dataset.arrow, possibly without state.json.
    if (auto r = shards.add(dir / "dataset.arrow"); !r) return std::unexpected(r.error());
    if (auto r = shards.finish(out); !r) return std::unexpected(r.error());
  } else {
    return fail("not a Hugging Face save_to_disk directory: no state.json or dataset.arrow", dir.string(),
                "give the directory that Dataset.save_to_disk wrote (or a DatasetDict's)");
  }
  cross_check(dir, split.empty() ? std::string_view(request.split) : std::string_view(split), out.rows, out);
  return out;
}

Result<DatasetCount> count_hf_dict(const fs::path& dir, const DatasetRequest& request) {
  const auto dict_file = dir / "dataset_dict.json";
  auto dict = read_json(dict_file);
  if (!dict) return std::unexpected(dict.error());
  const auto splits = dict->is_object() ? dict->find("splits") : dict->end();
  if (splits == dict->end() || !splits->is_array()) {
    return fail("no \"splits\" list", dict_file.string(), "save the DatasetDict again");
  }
  std::vector<std::string> names;
  for (const auto& s : *splits) {
    if (!s.is_string())
      return fail("a split name is not a string", dict_file.string(), "save the DatasetDict again");
    names.push_back(s.get<std::string>());
  }
  if (std::ranges::find(names, request.split) == names.end()) {
    return fail(
        fmt::format("no split '{}' in this DatasetDict (splits: {})", request.split, fmt::join(names, ", ")),
        dict_file.string(), "choose one of the splits listed");
  }
  if (!plain_name(request.split)) {
    return fail(fmt::format("split name '{}' is not a directory name", request.split), dict_file.string());
  }
  auto count = count_hf(dir / request.split, request);
  if (!count) return count;
  count->format = DatasetFormat::hf_dict;
  return count;
}

}  // namespace trnslurm::dataset
