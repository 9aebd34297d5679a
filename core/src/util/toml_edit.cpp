#include "trnslurm/util/toml_edit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "toml_read.hpp"

namespace trnslurm {

namespace {

// The byte offset of a 1-based line and column (columns count characters, as toml++ counts them).
std::size_t offset_of(std::string_view text, std::uint32_t line, std::uint32_t column) {
  std::size_t at = 0;
  for (std::uint32_t l = 1; l < line && at < text.size(); ++l) {
    const auto nl = text.find('\n', at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  for (std::uint32_t c = 1; c < column && at < text.size(); ++c) {
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  return at;
}

// The offset just past the end of `line` (after its newline, or the end of the text).
std::size_t after_line(std::string_view text, std::uint32_t line) {
  const auto begin = offset_of(text, line, 1);
  const auto nl = text.find('\n', begin);
  return nl == std::string_view::npos ? text.size() : nl + 1;
}

struct Edit {
  std::size_t begin = 0;
  std::size_t end = 0;  // == begin: an insertion
  std::string text;
};

}  // namespace

Result<std::string> set_toml_values(std::string_view text, const std::string& file,
                                    const std::vector<TomlSet>& sets) {
  const auto root = parse_toml(text, file);
  if (!root) return std::unexpected(root.error());
  std::vector<Edit> edits;
  std::vector<std::string> appended;  // sections added at the end, in order
  std::string tail;
  for (const auto& set : sets) {
    const std::string path = fmt::format("{}.{}", set.section, set.key);
    const toml::node* section = root->get(set.section);
    if (section == nullptr) {
      if (std::ranges::find(appended, set.section) == appended.end()) {
        appended.push_back(set.section);
        tail += fmt::format("\n[{}]\n", set.section);
      }
      // Later keys of an appended section go right after its header's keys: one block per section.
      const auto header = tail.find(fmt::format("[{}]\n", set.section));
      const auto next = tail.find("\n[", header + 1);
      tail.insert(next == std::string::npos ? tail.size() : next + 1,
                  fmt::format("{} = {}\n", set.key, set.value));
      continue;
    }
    const auto* table = section->as_table();
    const auto& where = section->source().begin;
    if (table == nullptr)
      return fail(fmt::format("'{}' is not a table", set.section),
                  fmt::format("{}:{}:{}", file, where.line, where.column),
                  fmt::format("write it as a [{}] section", set.section));
    if (const toml::node* value = table->get(set.key)) {
      if (value->is_table() || value->is_array()) {
        const auto& at = value->source().begin;
        return fail(fmt::format("{} is not a single value", path),
                    fmt::format("{}:{}:{}", file, at.line, at.column),
                    fmt::format("write `{} = {}`", set.key, set.value));
      }
      const auto& s = value->source();
      edits.push_back({offset_of(text, s.begin.line, s.begin.column),
                       offset_of(text, s.end.line, s.end.column), set.value});
      continue;
    }
    if (table->is_inline() || where.line == 0)
      return fail(fmt::format("[{}] is written inline or by dotted keys: {} cannot be added to it",
                              set.section, set.key),
                  where.line == 0 ? file : fmt::format("{}:{}:{}", file, where.line, where.column),
                  fmt::format("add `{} = {}` to it by hand, or write it as a [{}] section", set.key,
                              set.value, set.section));
    // After the section's last value (its header when it has none): comments below it stay below.
    std::uint32_t last = where.line;
    for (auto&& [k, v] : *table) last = std::max(last, v.source().end.line);
    const auto at = after_line(text, last);
    edits.push_back({at, at, fmt::format("{} = {}\n", set.key, set.value)});
  }
  // Applied from the end so earlier offsets stay valid; insertions at one place keep their order.
  std::ranges::stable_sort(edits, [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  std::string out(text);
  for (auto it = edits.begin(); it != edits.end();) {
    auto group_end = std::find_if(it, edits.end(), [&](const Edit& e) { return e.begin != it->begin; });
    std::string inserted;
    for (auto e = it; e != group_end; ++e)
      if (e->end == e->begin) inserted += e->text;
    for (auto e = it; e != group_end; ++e)
      if (e->end != e->begin) out.replace(e->begin, e->end - e->begin, e->text);
    // A last line without its newline gets one before what follows it.
    if (!inserted.empty() && it->begin == out.size() && !out.empty() && out.back() != '\n')
      inserted.insert(0, "\n");
    out.insert(it->begin, inserted);
    it = group_end;
  }
  if (!tail.empty()) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += tail;
  }
  if (const auto check = parse_toml(out, file); !check)
    return fail(fmt::format("the edited text does not parse: {}", check.error().what), file,
                "edit the file by hand");
  return out;
}

}  // namespace trnslurm
