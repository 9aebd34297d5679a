#include "dataset_hf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
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
// of 200,000 shards take 20 s (the square of the count) before its first error. StateSax counts
// with it, and keeps what it reads.
struct CountingSax : json::json_sax_t {
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

Error syntax_error(const fs::path& file, const std::pair<std::size_t, std::string>& error) {
  return Error{fmt::format("not valid JSON: {}", error.second),
               where(file, error.first == 0 ? 0 : error.first - 1),
               "the file is damaged: save the dataset again"};
}

Error too_many_values(const fs::path& file) {
  return Error{fmt::format("more than {} JSON values: not read into memory", max_json_values), file.string(),
               "a dataset's JSON files hold a few values per shard or feature: this one is damaged or not a "
               "dataset's; save the dataset again"};
}

Result<json> read_json(const fs::path& file) {
  auto text = read_small_file(file, max_json_bytes);
  if (!text) return std::unexpected(text.error());
  CountingSax counter;
  if (!json::sax_parse(*text, &counter)) {
    if (counter.error) return std::unexpected(syntax_error(file, *counter.error));
    return std::unexpected(too_many_values(file));
  }
  return json::parse(*text, nullptr, false);
}

// A shard or split name must name an entry of this directory: nothing that climbs out of it.
bool plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

// The first name of `names` that an earlier one repeats, by its index: a sort of indices, 4 bytes a
// name, rather than a set of copies of the names.
std::optional<std::size_t> first_repeat(const std::vector<std::string>& names) {
  std::vector<std::uint32_t> order(names.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  // Stable: equal names stay in list order, so the least index after the first of a run is the repeat.
  std::ranges::stable_sort(order, {}, [&](std::uint32_t i) -> const std::string& { return names[i]; });
  std::optional<std::size_t> first;
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (names[order[k]] == names[order[k - 1]] && (!first || order[k] < *first)) first = order[k];
  }
  return first;
}

// One of state.json's shard lists ('_data_files', '_indices_data_files') as it is read: the
// names up to the first entry refused, and why that one was.
struct ShardList {
  const char* key;
  std::vector<std::string> names;
  std::optional<Error> refused;

  // The names, or the refusal of the first entry that is not right, in list order: a repeat of an
  // earlier name is found at the end, and comes before any entry refused after it.
  Result<std::vector<std::string>> take(const fs::path& state_file) && {
    if (const auto repeat = first_repeat(names)) {
      return fail(fmt::format("shard '{}' is listed twice in '{}'", names[*repeat], key), state_file.string(),
                  "each shard is counted once: save the dataset again");
    }
    if (refused) return std::unexpected(std::move(*refused));
    return std::move(names);
  }
};

// What is used of state.json.
struct State {
  std::string split;
  ShardList data{"_data_files", {}, {}};
  ShardList indices{"_indices_data_files", {}, {}};
};

// Reads state.json in one pass over its text, keeping what is used (the split, the shard names)
// and nothing else: no document is built, so a list of 200,000 shards costs their names, not a
// JSON tree of them. Every value is counted against max_json_values all the same. Where a key
// is repeated, the last one counts, as it would in a parsed document.
class StateSax final : public CountingSax {
 public:
  explicit StateSax(fs::path file) : file_(std::move(file)) {}

  State state;
  bool is_object = false;

  bool null() override { return value(Kind::null); }
  bool boolean(bool) override { return value(Kind::other); }
  bool number_integer(json::number_integer_t) override { return value(Kind::other); }
  bool number_unsigned(json::number_unsigned_t) override { return value(Kind::other); }
  bool number_float(json::number_float_t, const json::string_t&) override { return value(Kind::other); }
  bool string(json::string_t& s) override { return value(Kind::string, &s); }
  bool binary(json::binary_t&) override { return value(Kind::other); }
  bool start_object(std::size_t) override { return value(Kind::object) && (++depth_, true); }
  bool start_array(std::size_t) override { return value(Kind::array) && (++depth_, true); }
  bool key(json::string_t& k) override {
    if (depth_ == 1)
      member_ = k == "_split"                ? Member::split
                : k == "_data_files"         ? Member::data
                : k == "_indices_data_files" ? Member::indices
                                             : Member::other;
    if (depth_ == 3) filename_key_ = k == "filename";
    return true;
  }
  bool end_object() override {
    if (--depth_ == 2 && list_ != nullptr && !list_->refused) end_entry();
    return true;
  }
  bool end_array() override {
    if (--depth_ == 1) list_ = nullptr;
    return true;
  }

 private:
  enum class Kind { null, string, object, array, other };
  enum class Member { split, data, indices, other };

  // A value (or the start of one) at depth_: 0 the document, 1 a member of it, 2 an entry of a
  // shard list, 3 a member of that entry.
  bool value(Kind kind, json::string_t* s = nullptr) {
    if (!count()) return false;
    if (depth_ == 0) {
      is_object = kind == Kind::object;
    } else if (depth_ == 1 && member_ == Member::split) {
      state.split = kind == Kind::string ? std::move(*s) : std::string();
    } else if (depth_ == 1 && (member_ == Member::data || member_ == Member::indices)) {
      auto& list = member_ == Member::data ? state.data : state.indices;
      list = ShardList{list.key, {}, {}};
      if (kind == Kind::array)
        list_ = &list;
      else if (kind != Kind::null)
        list.refused =
            Error{fmt::format("'{}' is not a list", list.key), file_.string(), "save the dataset again"};
    } else if (depth_ == 2 && list_ != nullptr && !list_->refused) {
      name_.reset();
      filename_key_ = false;
      if (kind != Kind::object) no_filename();
    } else if (depth_ == 3 && list_ != nullptr && !list_->refused && filename_key_) {
      name_ = kind == Kind::string ? std::optional(std::move(*s)) : std::nullopt;
    }
    return true;
  }

  void no_filename() {
    list_->refused = Error{fmt::format("an entry of '{}' has no \"filename\" string", list_->key),
                           file_.string(), "save the dataset again"};
  }

  void end_entry() {
    if (!name_) return no_filename();
    if (!plain_name(*name_)) {
      list_->refused = Error{
          fmt::format("shard name '{}' in '{}' is not a file name in this directory", *name_, list_->key),
          file_.string(), "shard names must not hold '/' or be '.' or '..'"};
      return;
    }
    list_->names.push_back(std::move(*name_));
  }

  fs::path file_;
  std::size_t depth_ = 0;
  Member member_ = Member::other;
  ShardList* list_ = nullptr;  // the shard list whose entries are being read
  bool filename_key_ = false;
  std::optional<std::string> name_;  // the entry's "filename", if a string
};

// nlohmann's lexer holds a string or number whole, twice (its text and its value, each grown by
// doubling): one string of 63 MiB cost 192 MB. state.json's strings are names and fingerprints.
constexpr std::size_t max_token_bytes = 1u << 20;

// The characters of a JSON text as the lexer pulls them, ending early (and saying where) at a
// string or number longer than max_token_bytes. It follows strings and escapes only as far as
// needed to measure them: a text it misreads is one the lexer refuses anyway.
class TokenLimit {
 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = char;
    Iterator() = default;
    Iterator(TextReader::Iterator inner, TokenLimit* limit) : inner_(inner), limit_(limit) {}
    char operator*() const { return *inner_; }
    Iterator& operator++() {
      limit_->see(*inner_);
      ++inner_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return done() == other.done(); }

   private:
    bool done() const { return limit_ == nullptr || limit_->too_long || inner_ == TextReader::end(); }
    TextReader::Iterator inner_;
    TokenLimit* limit_ = nullptr;
  };

  std::optional<std::uint64_t> too_long;  // the offset of the token's first byte

 private:
  static bool separator(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '{' || c == '}' || c == '[' || c == ']' ||
           c == ',' || c == ':';
  }
  void see(char c) {
    const auto at = offset_++;
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
        run_ = 0;
        return;
      }
    } else if (c == '"') {
      in_string_ = true;
      run_ = 0;
      start_ = at;
      return;
    } else if (separator(c)) {
      run_ = 0;
      return;
    } else if (run_ == 0) {
      start_ = at;
    }
    if (++run_ > max_token_bytes) too_long = start_;
  }
  bool in_string_ = false;
  bool escaped_ = false;
  std::size_t run_ = 0;
  std::uint64_t start_ = 0;
  std::uint64_t offset_ = 0;
};

// state.json, read with StateSax: the same refusals, in the same order, as a parsed document.
Result<State> read_state(const fs::path& file) {
  auto reader = TextReader::open(file, max_json_bytes);
  if (!reader) return std::unexpected(reader.error());
  StateSax sax(file);
  TokenLimit limit;
  const bool ok =
      json::sax_parse(TokenLimit::Iterator(reader->begin(), &limit), TokenLimit::Iterator(), &sax);
  if (reader->error()) return std::unexpected(*reader->error());
  if (limit.too_long) {
    return fail(
        fmt::format("a JSON string or number of more than {} bytes: not read into memory", max_token_bytes),
        where(file, *limit.too_long),
        "state.json holds shard names and short values: this one is damaged or not a dataset's; save the "
        "dataset again");
  }
  if (!ok) {
    if (sax.error) return std::unexpected(syntax_error(file, *sax.error));
    return std::unexpected(too_many_values(file));
  }
  if (!sax.is_object) return fail("not a JSON object", file.string(), "save the dataset again");
  return std::move(sax.state);
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
    auto state = read_state(state_file);
    if (!state) return std::unexpected(state.error());
    split = std::move(state->split);
    auto names = std::move(state->data).take(state_file);
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
    auto indices = std::move(state->indices).take(state_file);
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
