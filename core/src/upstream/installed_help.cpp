#include "trnslurm/upstream/installed_help.hpp"

#include <algorithm>
#include <set>

namespace trnslurm::upstream {
namespace {

std::string normal(std::string_view option) {
  std::string out(option);
  std::ranges::replace(out, '_', '-');
  return out;
}

bool option_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

// Every whole word of the help that starts with "--", normalised.
std::set<std::string> listed(std::string_view help) {
  std::set<std::string> out;
  for (std::size_t i = help.find("--"); i != std::string_view::npos; i = help.find("--", i + 2)) {
    if (i > 0 && option_char(help[i - 1])) continue;
    std::size_t end = i + 2;
    while (end < help.size() && option_char(help[end])) ++end;
    out.insert(normal(help.substr(i, end - i)));
    i = end - 2;
  }
  return out;
}

}  // namespace

std::vector<std::string> options_given(const std::vector<ArgWord>& words) {
  std::vector<std::string> out;
  for (const auto& w : words) {
    if (!w.text.starts_with("--") || w.text.size() < 3) continue;
    auto name = w.text.substr(0, w.text.find('='));
    if (std::ranges::find(out, name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

std::vector<std::string> options_not_in_help(std::string_view help, const std::vector<std::string>& options) {
  const auto known = listed(help);
  std::vector<std::string> out;
  for (const auto& o : options) {
    const auto n = normal(o);
    if (known.contains(n)) continue;
    // --S.no-F: the switch's negative form, which some help texts print beside --S.F only.
    const auto dot = n.rfind('.');
    const auto field = dot == std::string::npos ? n.substr(2) : n.substr(dot + 1);
    if (field.starts_with("no-")) {
      const auto positive =
          (dot == std::string::npos ? std::string("--") : n.substr(0, dot + 1)) + field.substr(3);
      if (known.contains(positive)) continue;
    }
    out.push_back(o);
  }
  return out;
}

std::vector<std::string> trainer_help_argv(std::string_view train_script, const std::string& root,
                                           const std::string& venv) {
  std::string module(train_script.ends_with(".py") ? train_script.substr(0, train_script.size() - 3)
                                                   : train_script);
  std::ranges::replace(module, '/', '.');
  const std::string python = venv.empty() ? std::string("python3") : venv + "/bin/python3";
  return {"/usr/bin/env", "PYTHONPATH=" + root, python, "-m", module, "--help"};
}

}  // namespace trnslurm::upstream
