// A Hugging Face state.json, read by count_dataset as the CLI calls it (the one-pass reader of
// dataset_hf.cpp), against an oracle built on nlohmann's parsed document (the reader before issue
// 31): the same refusal, or the same first shard looked for. The directory holds no shard, so a
// list that is accepted ends at its first name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "fuzz_util.hpp"
#include "trnslurm/dataset/dataset.hpp"

namespace {

using nlohmann::json;

bool plain(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// What the document says: the refusal expected, or the first name of _data_files.
struct Expected {
  std::string what;  // empty: a name
  std::string first;
};

std::optional<Expected> expect(const json& doc) {
  if (!doc.is_object()) return Expected{"not a JSON object", {}};
  const auto list = doc.find("_data_files");
  if (list == doc.end() || list->is_null() || (list->is_array() && list->empty()))
    return Expected{"state.json lists no data files", {}};
  if (!list->is_array()) return Expected{"'_data_files' is not a list", {}};
  std::set<std::string> seen;
  for (const auto& entry : *list) {
    const auto name = entry.is_object() ? entry.find("filename") : entry.end();
    if (name == entry.end() || !name->is_string())
      return Expected{"an entry of '_data_files' has no \"filename\" string", {}};
    const auto& s = name->get_ref<const std::string&>();
    if (!plain(s))
      return Expected{"shard name '" + s + "' in '_data_files' is not a file name in this directory", {}};
    if (!seen.insert(s).second) return Expected{"shard '" + s + "' is listed twice in '_data_files'", {}};
  }
  const auto& first = (*list)[0]["filename"].get_ref<const std::string&>();
  // The one file of the directory is a shard of its own list's making: not a missing one.
  if (first == "state.json") return std::nullopt;
  return Expected{{}, first};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto dir = trnslurm::fuzz::scratch_dir() / "hf";
  std::filesystem::create_directories(dir);
  (void)trnslurm::fuzz::write_scratch("hf/state.json", data, size);
  const auto got = trnslurm::count_dataset({.path = dir, .format = trnslurm::DatasetFormat::hf});
  if (got) std::abort();  // no shard exists
  // Refused for their size, which the document does not know about.
  if (got.error().what.starts_with("a JSON string") || got.error().what.starts_with("more than")) return 0;
  const auto text = trnslurm::fuzz::as_text(data, size);
  const auto doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    if (!got.error().what.starts_with("not valid JSON: ")) std::abort();
    return 0;
  }
  const auto expected = expect(doc);
  if (!expected) return 0;
  if (!expected->what.empty() ? got.error().what != expected->what
                              : got.error().where != (dir / expected->first).string())
    std::abort();
  return 0;
}
