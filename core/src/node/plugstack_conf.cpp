#include "trnslurm/node/plugstack_conf.hpp"

#include <algorithm>
#include <cctype>

namespace trnslurm {

namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

std::string_view strip_comment(std::string_view line) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  return line;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::ranges::equal(a, b, [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

PlugstackScan scan_plugstack(std::string_view text, std::string_view file) {
  PlugstackScan scan;
  std::size_t lineno = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = strip_comment(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineno;
    auto w = words(line);
    if (w.size() >= 2 && w[0] == "include") {
      scan.includes.push_back(w[1]);
      continue;
    }
    if (w.size() < 2 || (w[0] != "required" && w[0] != "optional")) continue;
    const std::string_view path = w[1];
    const auto slash = path.rfind('/');
    const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (base != "trnslurm.so" || scan.trnslurm) continue;
    PlugstackLine found;
    found.required = w[0] == "required";
    found.path = w[1];
    found.args.assign(w.begin() + 2, w.end());
    found.file = std::string(file);
    found.line = lineno;
    scan.trnslurm = std::move(found);
  }
  return scan;
}

std::optional<std::string> slurm_conf_value(std::string_view text, std::string_view key) {
  std::optional<std::string> value;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = strip_comment(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || !iequals(line.substr(0, eq), key)) continue;
    auto w = words(line.substr(eq + 1));
    if (!w.empty()) value = w.front();
  }
  return value;
}

}  // namespace trnslurm
