// Reading the instances format (docs/instances.md, "Format"): [sources.<id>] and
// [instances."<type>"] tables; each figure a bare value or { value, source, confirmed, note }.
// Every refusal names file:line:column and what to write instead.
#include "instance_toml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../util/toml_read.hpp"
#include "trnslurm/util/suggest.hpp"

namespace trnslurm {

namespace {

enum class Kind { text, count, number, counts };

// What each figure holds, its bounds, and an example for hints.
struct FigureSpec {
  std::string_view key;
  Kind kind;
  double lo;
  double hi;
  std::string_view example;
  std::string_view what;
};

const std::vector<FigureSpec>& figure_specs() {
  using enum Kind;
  static const std::vector<FigureSpec> specs{
      {"target", text, 0, 0, "\"trn2\"", "the compiler target (trn1, trn2, trn3; cpu for no device)"},
      {"device", text, 0, 0, "\"Trainium2\"", "the device name the Neuron driver reports"},
      {"devices", count, 1, 1024, "16", "Neuron devices per instance"},
      {"cores_per_device", count, 1, 1024, "8", "physical NeuronCores per device"},
      {"lnc", counts, 1, 64, "[1, 2]", "the logical NeuronCore configs it accepts"},
      {"lnc_default", count, 1, 64, "2", "the default logical NeuronCore config"},
      {"hbm_gib_per_device", number, 0, 1e6, "96", "device memory (HBM) per device, GiB"},
      {"bf16_tflops_per_device", number, 0, 1e9, "667", "peak dense BF16 TFLOPS per device"},
      {"hbm_gb_per_s", number, 0, 1e7, "2900", "device memory (HBM) bandwidth per device, GB/s"},
      {"vcpus", count, 1, 1e6, "192", "vCPUs"},
      {"host_memory_gib", number, 0, 1e9, "2048", "host memory, GiB"},
      {"efa_devices", count, 0, 1024, "16", "EFA devices"},
      {"efa_gbps", number, 0, 1e7, "3200", "EFA bandwidth, Gbps"},
      {"neuronlink_gb_per_s", number, 0, 1e7, "1024", "device-to-device bandwidth per device, GB/s"},
      {"ultraserver_nodes", count, 1, 4096, "4", "servers in one UltraServer"},
      {"ultraserver_link_gb_per_s", number, 0, 1e7, "256",
       "bandwidth between UltraServer servers per device, GB/s"},
      {"collective_busbw_gb_per_s", number, 0, 1e7, "40",
       "all_reduce bus bandwidth across nodes the collective check expects, GiB/s"},
  };
  return specs;
}

const FigureSpec* spec_of(std::string_view key) {
  const auto& specs = figure_specs();
  const auto it = std::ranges::find(specs, key, &FigureSpec::key);
  return it == specs.end() ? nullptr : &*it;
}

// The Neuron figures a type needs before plan or the plugin can use it.
constexpr std::string_view required_keys[] = {"devices", "cores_per_device", "lnc", "lnc_default",
                                              "hbm_gib_per_device"};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::text:
      return "a string";
    case Kind::count:
      return "a whole number";
    case Kind::number:
      return "a number";
    case Kind::counts:
      return "an array of whole numbers";
  }
  return "a value";
}

// Names that go into messages, JSON and scripts: kept to what EC2 and source ids use.
bool plain_name(std::string_view name, std::size_t max) {
  return !name.empty() && name.size() <= max && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  });
}

class Reader {
 public:
  Reader(InstanceTable& table, std::string file, const InstanceReadOptions& options)
      : table_(table), file_(std::move(file)), options_(options) {}

  SourcePos pos(const toml::node& node) const {
    return SourcePos{file_, node.source().begin.line, node.source().begin.column};
  }
  SourcePos pos(const toml::key& key) const {
    return SourcePos{file_, key.source().begin.line, key.source().begin.column};
  }
  std::string at(const toml::node& node) const { return to_string(pos(node)); }
  std::string at(const toml::key& key) const { return to_string(pos(key)); }

  Result<void> read(const toml::table& root) {
    for (auto&& [key, node] : root) {
      const std::string name(key.str());
      if (name != "sources" && name != "instances") {
        if (options_.other_tables_allowed) continue;
        auto close = closest_match(name, {"sources", "instances"});
        return fail(fmt::format("unknown section '{}'", name), at(key),
                    close ? fmt::format("did you mean '{}'?", *close)
                          : "an instances file holds [sources.<id>] and [instances.\"<type>\"] tables");
      }
      if (!node.is_table())
        return fail(fmt::format("'{}' must be a table, got {}", name, toml_type_name(node)), at(node),
                    fmt::format("write [{}.<name>] sections", name));
    }
    // Sources first: a figure may cite one written further down.
    if (const auto* sources = root.get_as<toml::table>("sources"))
      for (auto&& [key, node] : *sources)
        if (auto r = read_source(key, node); !r) return r;
    if (const auto* types = root.get_as<toml::table>("instances"))
      for (auto&& [key, node] : *types)
        if (auto r = read_type(key, node); !r) return r;
    return {};
  }

 private:
  Result<void> read_source(const toml::key& key, const toml::node& node) {
    const std::string id(key.str());
    if (!plain_name(id, 64))
      return fail(fmt::format("source id '{}' is not a plain name", id), at(key),
                  "use letters, digits, '.', '-' and '_' (at most 64)");
    const auto* t = node.as_table();
    if (t == nullptr)
      return fail(fmt::format("sources.{} must be a table, got {}", id, toml_type_name(node)), at(node),
                  fmt::format("write it as [sources.{}] with title and url (or repo, path, commit)", id));
    if (const auto* known = table_.source(id))
      return fail(fmt::format("source '{}' is already defined at {}", id, to_string(known->at)), at(key),
                  "give this source another id");
    InstanceSource s;
    s.id = id;
    s.origin = options_.origin;
    s.at = pos(key);
    static const std::vector<std::string> keys{"title", "url", "repo", "path", "commit"};
    for (auto&& [k, v] : *t) {
      const std::string name(k.str());
      std::string* field = name == "title"    ? &s.title
                           : name == "url"    ? &s.url
                           : name == "repo"   ? &s.repo
                           : name == "path"   ? &s.path
                           : name == "commit" ? &s.commit
                                              : nullptr;
      if (field == nullptr) {
        auto close = closest_match(name, keys);
        return fail(
            fmt::format("unknown key '{}' in [sources.{}]", name, id), at(k),
            close ? fmt::format("did you mean '{}'?", *close) : fmt::format("valid keys: {}", join(keys)));
      }
      if (!v.is_string())
        return fail(fmt::format("sources.{}.{} must be a string, got {}", id, name, toml_type_name(v)), at(v),
                    fmt::format("quote it: {} = \"...\"", name));
      *field = v.as_string()->get();
      if (field->size() > 1024 || field->find_first_of("\n\r") != std::string::npos)
        return fail(fmt::format("sources.{}.{} is longer than one line of 1024 characters", id, name), at(v),
                    "shorten it");
    }
    if (s.url.empty() && (s.repo.empty() || s.path.empty()))
      return fail(fmt::format("source '{}' names no page", id), at(key),
                  "give url = \"https://...\", or repo, path and commit of a public repository");
    table_.put(std::move(s));
    return {};
  }

  Result<void> read_type(const toml::key& key, const toml::node& node) {
    InstanceType type;
    type.name = std::string(key.str());
    type.origin = options_.origin;
    type.at = pos(key);
    const std::string section = fmt::format("[instances.\"{}\"]", type.name);
    if (!plain_name(type.name, 64))
      return fail(fmt::format("instance type '{}' is not a plain name", type.name), at(key),
                  "use the EC2 name: letters, digits, '.', '-' and '_' (at most 64)");
    const auto* t = node.as_table();
    if (t == nullptr)
      return fail(fmt::format("instances.\"{}\" must be a table, got {}", type.name, toml_type_name(node)),
                  at(node), fmt::format("write it as a {} section", section));
    for (auto&& [k, v] : *t) {
      const std::string name(k.str());
      const auto* spec = spec_of(name);
      if (spec == nullptr) {
        auto close = closest_match(name, instance_figure_keys());
        return fail(fmt::format("unknown key '{}' in {}", name, section), at(k),
                    close ? fmt::format("did you mean '{}'?", *close)
                          : fmt::format("valid keys: {}", join(instance_figure_keys())));
      }
      Result<void> r;
      for_each_figure(type, [&](std::string_view figure_key, auto& figure) {
        if (figure_key == name) r = read_figure(figure, *spec, type.name, k, v);
      });
      if (!r) return r;
    }
    if (auto r = check_type(type, section); !r) return r;
    table_.put(std::move(type));
    return {};
  }

  // A figure: the bare value, or { value, source, confirmed, note }.
  template <class T>
  Result<void> read_figure(Figure<T>& figure, const FigureSpec& spec, const std::string& type,
                           const toml::key& key, const toml::node& node) {
    const std::string path = fmt::format("instances.\"{}\".{}", type, spec.key);
    figure.at = pos(node);
    const auto* t = node.as_table();
    if (t == nullptr) return read_value(figure, spec, path, node);
    bool has_value = false;
    static const std::vector<std::string> keys{"value", "source", "confirmed", "note"};
    for (auto&& [k, v] : *t) {
      const std::string name(k.str());
      if (name == "value") {
        has_value = true;
        if (auto r = read_value(figure, spec, path, v); !r) return r;
        figure.at = pos(v);
      } else if (name == "source") {
        if (!v.is_string())
          return fail(fmt::format("{}.source must be a string, got {}", path, toml_type_name(v)), at(v),
                      "name a [sources.<id>] table: source = \"<id>\"");
        figure.source = v.as_string()->get();
        if (options_.check_sources && table_.source(figure.source) == nullptr) {
          std::vector<std::string> ids;
          for (const auto& s : table_.sources()) ids.push_back(s.id);
          auto close = closest_match(figure.source, ids);
          return fail(fmt::format("{} cites source '{}', which no [sources.{}] table defines", path,
                                  figure.source, figure.source),
                      at(v),
                      close ? fmt::format("did you mean '{}'?", *close)
                            : fmt::format("add [sources.{}] with title and url", figure.source));
        }
      } else if (name == "confirmed") {
        if (!v.is_boolean())
          return fail(fmt::format("{}.confirmed must be true or false, got {}", path, toml_type_name(v)),
                      at(v), "confirmed = true only when the source states the figure");
        figure.confirmed = v.as_boolean()->get();
      } else if (name == "note") {
        if (!v.is_string())
          return fail(fmt::format("{}.note must be a string, got {}", path, toml_type_name(v)), at(v),
                      "quote it: note = \"...\"");
        figure.note = v.as_string()->get();
        if (figure.note.size() > 512 || figure.note.find_first_of("\n\r") != std::string::npos)
          return fail(fmt::format("{}.note is longer than one line of 512 characters", path), at(v),
                      "shorten it");
      } else {
        auto close = closest_match(name, keys);
        return fail(fmt::format("unknown key '{}' in {}", name, path), at(k),
                    close ? fmt::format("did you mean '{}'?", *close)
                          : fmt::format("a figure is {{ value = {}, source = \"<id>\", confirmed = true }}",
                                        spec.example));
      }
    }
    if (figure.confirmed && figure.source.empty())
      return fail(fmt::format("{} is confirmed but cites no source", path), at(key),
                  "add source = \"<id>\" naming the page that states it, or confirmed = false");
    if (!has_value && figure.source.empty() && figure.note.empty())
      return fail(fmt::format("{} has no value", path), at(key),
                  fmt::format("write {} = {}, or a note saying why it is unknown", spec.key, spec.example));
    return {};
  }

  Result<void> wrong_kind(const FigureSpec& spec, const std::string& path, const toml::node& node) const {
    std::string hint = fmt::format("write it as {} = {}", spec.key, spec.example);
    if (node.is_string() && spec.kind != Kind::text)
      hint = fmt::format("remove the quotes: {} = {}", spec.key, node.as_string()->get());
    return fail(fmt::format("{} must be {}, got {}", path, kind_name(spec.kind), toml_type_name(node)),
                at(node), hint);
  }

  Result<std::uint32_t> count(const FigureSpec& spec, const std::string& path, const toml::node& node) const {
    const std::int64_t v = node.as_integer()->get();
    if (v < static_cast<std::int64_t>(spec.lo) || v > static_cast<std::int64_t>(spec.hi))
      return fail(fmt::format("{} = {} is out of range", path, v), at(node),
                  fmt::format("{} is a whole number from {} to {}", spec.what, spec.lo, spec.hi));
    return static_cast<std::uint32_t>(v);
  }

  Result<void> read_value(Figure<std::string>& figure, const FigureSpec& spec, const std::string& path,
                          const toml::node& node) const {
    if (!node.is_string()) return wrong_kind(spec, path, node);
    const std::string v = node.as_string()->get();
    const bool ok = spec.key == "target"
                        ? !v.empty() && v.size() <= 16 &&
                              std::ranges::all_of(
                                  v, [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); })
                        : plain_name(v, 64);
    if (!ok)
      return fail(fmt::format("{} = \"{}\" is not a plain name", path, v), at(node),
                  spec.key == "target" ? "use lowercase letters and digits, e.g. \"trn2\""
                                       : "use letters, digits, '.', '-' and '_', e.g. \"Trainium2\"");
    figure.value = v;
    return {};
  }

  Result<void> read_value(Figure<std::uint32_t>& figure, const FigureSpec& spec, const std::string& path,
                          const toml::node& node) const {
    if (!node.is_integer()) return wrong_kind(spec, path, node);
    auto v = count(spec, path, node);
    if (!v) return std::unexpected(v.error());
    figure.value = *v;
    return {};
  }

  Result<void> read_value(Figure<double>& figure, const FigureSpec& spec, const std::string& path,
                          const toml::node& node) const {
    if (!node.is_integer() && !node.is_floating_point()) return wrong_kind(spec, path, node);
    const double v =
        node.is_integer() ? static_cast<double>(node.as_integer()->get()) : node.as_floating_point()->get();
    if (!std::isfinite(v) || v < spec.lo || v > spec.hi)
      return fail(fmt::format("{} = {} is out of range", path, v), at(node),
                  fmt::format("{} is a number from {} to {}", spec.what, spec.lo, spec.hi));
    figure.value = v;
    return {};
  }

  Result<void> read_value(Figure<std::vector<std::uint32_t>>& figure, const FigureSpec& spec,
                          const std::string& path, const toml::node& node) const {
    const auto* array = node.as_array();
    if (array == nullptr || array->empty() ||
        !std::ranges::all_of(*array, [](const toml::node& n) { return n.is_integer(); }))
      return wrong_kind(spec, path, node);
    if (array->size() > 8)
      return fail(fmt::format("{} lists {} values", path, array->size()), at(node), "list at most 8");
    std::vector<std::uint32_t> values;
    for (const auto& n : *array) {
      auto v = count(spec, path, n);
      if (!v) return std::unexpected(v.error());
      if (std::ranges::find(values, *v) != values.end())
        return fail(fmt::format("{} lists {} twice", path, *v), at(n), "list each value once");
      values.push_back(*v);
    }
    figure.value = std::move(values);
    return {};
  }

  // What a definition needs as a whole, once every figure is read.
  Result<void> check_type(const InstanceType& type, const std::string& section) const {
    const std::string where = to_string(type.at);
    if (!type.target.value)
      return fail(fmt::format("{} has no target", section), where,
                  "add target = \"trn2\" (the compiler target: trn1, trn2, trn3), or \"cpu\"");
    if (type.cpu()) {
      for (const auto key : required_keys) {
        const FigureInfo* info = figure_info(type, key);
        if (info != nullptr && !info->at.file.empty())
          return fail(fmt::format("{} has target \"cpu\" and {}", section, key), to_string(info->at),
                      "a cpu type has no Neuron device: remove it (the recipe gives cluster.cores_per_node)");
      }
      return {};
    }
    for (const auto key : required_keys) {
      if (!figure_json(type, key).is_null()) continue;
      const auto* spec = spec_of(key);
      return fail(fmt::format("{} lacks {} ({})", section, key, spec->what), where,
                  fmt::format("add {} = {}", key, spec->example));
    }
    const auto& lnc = *type.lnc.value;
    const std::uint32_t def = *type.lnc_default.value;
    if (std::ranges::find(lnc, def) == lnc.end())
      return fail(fmt::format("lnc_default = {} is not one of lnc = [{}]", def, type.lnc_choices()),
                  to_string(type.lnc_default.at), "make lnc_default one of the lnc values");
    for (const auto v : lnc)
      if (*type.cores_per_device.value % v != 0)
        return fail(
            fmt::format("lnc {} does not divide the {} cores of a device", v, *type.cores_per_device.value),
            to_string(type.lnc.at), "an LNC groups physical cores of one device: use divisors of it");
    if (std::uint64_t{*type.devices.value} * *type.cores_per_device.value > (1U << 16))
      return fail(fmt::format("{} devices x {} cores is more than 65536 NeuronCores", *type.devices.value,
                              *type.cores_per_device.value),
                  where, "check devices and cores_per_device");
    return {};
  }

  InstanceTable& table_;
  std::string file_;
  InstanceReadOptions options_;
};

}  // namespace

const std::vector<std::string>& instance_figure_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& s : figure_specs()) out.emplace_back(s.key);
    return out;
  }();
  return keys;
}

Result<void> add_instance_tables(InstanceTable& table, const toml::table& root, const std::string& file,
                                 const InstanceReadOptions& options) {
  // Read into a copy: a file refused half way adds nothing.
  InstanceTable next = table;
  Reader reader(next, file, options);
  if (auto r = reader.read(root); !r) return r;
  table = std::move(next);
  return {};
}

Result<void> InstanceTable::add(const InstanceFile& file, bool other_tables_allowed) {
  auto root = parse_toml(file.text, file.name);
  if (!root) return std::unexpected(root.error());
  return add_instance_tables(*this, *root, file.name, {file.origin, other_tables_allowed, true});
}

}  // namespace trnslurm
