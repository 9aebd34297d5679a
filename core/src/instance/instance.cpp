#include "trnslurm/instance/instance.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "../util/toml_read.hpp"
#include "instance_toml.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm {

std::string_view to_string(InstanceOrigin origin) {
  switch (origin) {
    case InstanceOrigin::bundled:
      return "bundled";
    case InstanceOrigin::site:
      return "site";
    case InstanceOrigin::recipe:
      return "recipe";
  }
  return "bundled";
}

std::uint32_t InstanceType::physical_cores() const {
  if (cpu() || !devices.value || !cores_per_device.value) return 0;
  return *devices.value * *cores_per_device.value;
}

std::uint32_t InstanceType::ultraserver_size() const {
  return ultraserver_nodes.value.value_or(1);
}

bool InstanceType::accepts_lnc(std::uint32_t v) const {
  return lnc.value && std::ranges::find(*lnc.value, v) != lnc.value->end();
}

std::string InstanceType::lnc_choices() const {
  if (!lnc.value) return "1";
  std::string out;
  const auto& values = *lnc.value;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : (i + 1 == values.size() ? " or " : ", "), values[i]);
  return out;
}

const InstanceType* InstanceTable::find(std::string_view name) const {
  const auto it = std::ranges::find(types_, name, &InstanceType::name);
  return it == types_.end() ? nullptr : &*it;
}

const InstanceSource* InstanceTable::source(std::string_view id) const {
  const auto it = std::ranges::find(sources_, id, &InstanceSource::id);
  return it == sources_.end() ? nullptr : &*it;
}

std::vector<std::string> InstanceTable::names() const {
  std::vector<std::string> out;
  out.reserve(types_.size());
  for (const auto& t : types_) out.push_back(t.name);
  return out;
}

void InstanceTable::put(InstanceType type) {
  const auto it = std::ranges::find(types_, type.name, &InstanceType::name);
  if (it == types_.end()) {
    types_.push_back(std::move(type));
    return;
  }
  type.replaces = fmt::format("the {} definition{}", to_string(it->origin),
                              it->origin == InstanceOrigin::bundled ? "" : " at " + to_string(it->at));
  notes_.push_back(
      fmt::format("{}: [instances.\"{}\"] replaces {}", to_string(type.at), type.name, type.replaces));
  *it = std::move(type);
}

void InstanceTable::put(InstanceSource source) {
  sources_.push_back(std::move(source));
}

std::string_view bundled_instances_text() {
  for (const auto& t : detail::bundled_instance_texts())
    if (t.name == "instances") return t.text;
  return {};
}

const InstanceTable& bundled_instances() {
  static const InstanceTable table = [] {
    InstanceTable t;
    // Checked by the unit tests: a build whose bundled file does not parse never ships.
    (void)t.add({std::string(bundled_instances_text()), "instances.toml (bundled)", InstanceOrigin::bundled});
    return t;
  }();
  return table;
}

Result<InstanceTable> load_instance_table(const std::optional<InstanceFile>& site) {
  InstanceTable table = bundled_instances();
  if (site)
    if (auto r = table.add(*site); !r) return std::unexpected(r.error());
  return table;
}

std::optional<InstanceType> bundled_instance(std::string_view name) {
  // The bundled file gives each type one [instances."<name>"] table on a line of its own,
  // ending where the next table starts (a unit test holds it to that).
  const std::string_view text = bundled_instances_text();
  const std::string header = fmt::format("[instances.\"{}\"]\n", name);
  std::size_t begin = text.find(header);
  while (begin != std::string_view::npos && begin != 0 && text[begin - 1] != '\n')
    begin = text.find(header, begin + 1);
  if (begin == std::string_view::npos) return std::nullopt;
  std::size_t end = text.find("\n[", begin + header.size());
  end = end == std::string_view::npos ? text.size() : end + 1;
  // Blank lines in front keep the positions those of the whole file.
  std::string snippet(static_cast<std::size_t>(std::count(text.begin(), text.begin() + begin, '\n')), '\n');
  snippet += text.substr(begin, end - begin);
  const auto root = parse_toml(snippet, "instances.toml (bundled)");
  if (!root) return std::nullopt;
  InstanceTable one;
  if (!add_instance_tables(one, *root, "instances.toml (bundled)", {InstanceOrigin::bundled, false, false}))
    return std::nullopt;
  const auto* type = one.find(name);
  return type ? std::optional<InstanceType>(*type) : std::nullopt;
}

Result<InstanceChoice> choose_instance(const InstanceTable& table, std::string_view name, std::uint32_t lnc,
                                       std::optional<std::uint32_t> explicit_cores) {
  const auto* type = table.find(name);
  if (type == nullptr) {
    const auto names = table.names();
    auto close = closest_match(name, names);
    return fail(
        fmt::format("unknown instance type '{}'", name), "cluster.instance",
        close ? fmt::format("did you mean '{}'? `trnslurm instances` lists the known types; a new one is "
                            "defined in [instances] (docs/instances.md)",
                            *close)
              : fmt::format("use one of: {}; or define it (docs/instances.md)", fmt::join(names, ", ")));
  }
  InstanceChoice choice{type, lnc == 0 ? type->lnc_default.value.value_or(1) : lnc, 0};
  auto cores = cores_per_node(*type, choice.lnc, explicit_cores);
  if (!cores) return std::unexpected(cores.error());
  choice.cores_per_node = *cores;
  return choice;
}

Result<std::uint32_t> cores_per_node(const InstanceType& instance, std::uint32_t lnc,
                                     std::optional<std::uint32_t> explicit_cores) {
  if (instance.cpu()) {
    if (!explicit_cores || *explicit_cores == 0)
      return fail(fmt::format("instance '{}' needs cores_per_node", instance.name), "cluster.cores_per_node",
                  "set cluster.cores_per_node to the number of workers per node");
    return *explicit_cores;
  }
  if (!instance.accepts_lnc(lnc))
    return fail(fmt::format("lnc = {} is not valid on {}", lnc, instance.name), "cluster.lnc",
                instance.lnc.value && instance.lnc.value->size() == 1
                    ? fmt::format("{} supports only lnc = {}", instance.name, instance.lnc_choices())
                    : fmt::format("use lnc = {}", instance.lnc_choices()));
  const std::uint32_t cores = instance.physical_cores() / lnc;
  if (explicit_cores && *explicit_cores != cores)
    return fail(fmt::format("cores_per_node = {} but {} at lnc = {} has {} cores", *explicit_cores,
                            instance.name, lnc, cores),
                "cluster.cores_per_node", "remove cores_per_node: it follows from the instance and lnc");
  return cores;
}

std::uint64_t memory_per_core_bytes(const InstanceType& instance, std::uint32_t lnc) {
  const std::uint32_t physical = instance.physical_cores();
  if (physical == 0 || lnc == 0 || !instance.hbm_gib_per_device.value) return 0;
  const double node_bytes = *instance.hbm_gib_per_device.value *
                            static_cast<double>(*instance.devices.value) *
                            static_cast<double>(std::uint64_t{1} << 30);
  const auto logical_cores = physical / lnc;  // whole logical cores: lnc divides the physical ones
  return static_cast<std::uint64_t>(node_bytes / static_cast<double>(logical_cores));
}

const FigureInfo* figure_info(const InstanceType& type, std::string_view key) {
  const FigureInfo* out = nullptr;
  for_each_figure(type, [&](std::string_view k, const auto& figure) {
    if (k == key) out = &figure;
  });
  return out;
}

namespace {
nlohmann::json value_json(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nullptr;
}
nlohmann::json value_json(const std::optional<std::uint32_t>& v) {
  return v ? nlohmann::json(*v) : nullptr;
}
nlohmann::json value_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nullptr;
}
nlohmann::json value_json(const std::optional<std::vector<std::uint32_t>>& v) {
  return v ? nlohmann::json(*v) : nullptr;
}
}  // namespace

nlohmann::json figure_json(const InstanceType& type, std::string_view key) {
  nlohmann::json out = nullptr;
  for_each_figure(type, [&](std::string_view k, const auto& figure) {
    if (k == key) out = value_json(figure.value);
  });
  return out;
}

std::string figure_text(const InstanceType& type, std::string_view key) {
  const auto v = figure_json(type, key);
  if (v.is_null()) return "unknown";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : ", ") + e.dump();
    return out;
  }
  if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
  return v.dump();
}

std::vector<std::string> unconfirmed_figures(const InstanceType& instance,
                                             const std::vector<std::string_view>& keys) {
  std::vector<std::string> out;
  for (const auto key : keys) {
    const auto* info = figure_info(instance, key);
    if (info == nullptr || info->confirmed || (info->at.file.empty() && figure_json(instance, key).is_null()))
      continue;  // confirmed, or not part of this type at all
    std::string why = info->note;
    if (why.empty())
      why = info->source.empty() ? fmt::format("{} definition", to_string(instance.origin))
                                 : fmt::format("source {}", info->source);
    out.push_back(fmt::format("{} = {} ({})", key, figure_text(instance, key), why));
  }
  return out;
}

namespace {
nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}
}  // namespace

nlohmann::json to_json(const InstanceTable& table) {
  nlohmann::json types = nlohmann::json::array();
  for (const auto& t : table.types()) {
    nlohmann::json figures = nlohmann::json::object();
    for_each_figure(t, [&](std::string_view key, const auto& figure) {
      if (figure.at.file.empty() && !figure.value) return;  // not written
      figures[std::string(key)] = {{"value", value_json(figure.value)},
                                   {"source", or_null(figure.source)},
                                   {"confirmed", figure.confirmed},
                                   {"note", figure.note},
                                   {"at", to_string(figure.at)}};
    });
    types.push_back({{"name", t.name},
                     {"origin", to_string(t.origin)},
                     {"at", to_string(t.at)},
                     {"replaces", or_null(t.replaces)},
                     {"figures", std::move(figures)}});
  }
  nlohmann::json sources = nlohmann::json::object();
  for (const auto& s : table.sources())
    sources[s.id] = {{"title", s.title}, {"url", s.url},       {"repo", s.repo},
                     {"path", s.path},   {"commit", s.commit}, {"origin", to_string(s.origin)}};
  return {{"instances", std::move(types)}, {"sources", std::move(sources)}, {"notes", table.notes()}};
}

}  // namespace trnslurm
