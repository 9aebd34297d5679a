#include <algorithm>

#include <nlohmann/json.hpp>

#include "trnslurm/upstream/interface.hpp"

namespace trnslurm::upstream {

namespace {
// interfaces/ also holds records of tools read from documentation (neuron_parallel_compile):
// they have no "scripts" and are not command-line interfaces of scripts.
bool describes_scripts(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() && j.contains("scripts");
}

std::vector<Interface> parse_bundled() {
  std::vector<Interface> out;
  for (const auto& record : detail::bundled_interface_texts()) {
    if (!describes_scripts(record.text)) continue;
    // A bundled record that does not parse is left out; tests/unit/upstream checks there is none.
    if (auto parsed =
            parse_interface(record.text, "bundled:interfaces/" + std::string(record.name) + ".json"))
      out.push_back(std::move(*parsed));
  }
  return out;
}
}  // namespace

std::span<const Interface> bundled_interfaces() {
  static const std::vector<Interface> all = parse_bundled();
  return all;
}

const Interface* bundled_interface(std::string_view package, std::string_view release) {
  const auto all = bundled_interfaces();
  const auto it = std::ranges::find_if(
      all, [&](const Interface& i) { return i.package == package && i.release == release; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace trnslurm::upstream
