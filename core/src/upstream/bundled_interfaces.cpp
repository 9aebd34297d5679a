#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

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

std::optional<Interface> parse_record(const detail::BundledInterfaceText& record) {
  if (!describes_scripts(record.text)) return std::nullopt;
  // A bundled record that does not parse is left out; tests/unit/upstream checks there is none.
  auto parsed = parse_interface(record.text, "bundled:interfaces/" + std::string(record.name) + ".json");
  if (!parsed) return std::nullopt;
  return std::move(*parsed);
}

std::vector<Interface> parse_bundled() {
  std::vector<Interface> out;
  for (const auto& record : detail::bundled_interface_texts())
    if (auto parsed = parse_record(record)) out.push_back(std::move(*parsed));
  return out;
}

// The record of interfaces/<package>-<release>.json alone: parsing all of them (hundreds of KiB of
// JSON) cost every command that names one about 4 ms (docs/scale.md).
const Interface* named_record(std::string_view package, std::string_view release) {
  static std::mutex guard;
  static std::vector<std::unique_ptr<const Interface>> parsed;  // stable addresses
  const std::scoped_lock lock(guard);
  for (const auto& i : parsed)
    if (i->package == package && i->release == release) return i.get();
  const std::string name = std::string(package) + "-" + std::string(release);
  for (const auto& record : detail::bundled_interface_texts()) {
    if (record.name != name) continue;
    auto one = parse_record(record);
    if (!one || one->package != package || one->release != release) return nullptr;
    parsed.push_back(std::make_unique<const Interface>(std::move(*one)));
    return parsed.back().get();
  }
  return nullptr;
}
}  // namespace

std::span<const Interface> bundled_interfaces() {
  static const std::vector<Interface> all = parse_bundled();
  return all;
}

const Interface* bundled_interface(std::string_view package, std::string_view release) {
  if (const auto* named = named_record(package, release)) return named;
  // A record whose file is named otherwise is still found.
  const auto all = bundled_interfaces();
  const auto it = std::ranges::find_if(
      all, [&](const Interface& i) { return i.package == package && i.release == release; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace trnslurm::upstream
