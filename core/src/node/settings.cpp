#include "trnslurm/node/settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {

namespace {

bool has_control_char(std::string_view text) {
  return std::ranges::any_of(text, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  const auto port = parse_number<std::uint32_t>(text);
  if (!port || *port < 1 || *port > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*port);
}

// A small decimal for a runtime variable's value: digits only, so nothing odd reaches the task.
Result<std::string> parse_count(std::string_view key, std::string_view value) {
  if (!parse_number<std::uint32_t>(value))
    return fail(fmt::format("invalid value '{}' for '{}'", value, key), "trnslurm: plugstack.conf",
                "use a whole number");
  return std::string(value);
}

Result<std::string> parse_flag01(std::string_view key, std::string_view value) {
  if (value != "0" && value != "1")
    return fail(fmt::format("invalid value '{}' for '{}'", value, key), "trnslurm: plugstack.conf",
                "use 0 or 1");
  return std::string(value);
}

Result<std::string> parse_cidr(std::string_view value) {
  const auto slash = value.find('/');
  auto bad = [&] {
    return fail(fmt::format("invalid network '{}' for 'master_net'", value), "trnslurm: plugstack.conf",
                "use an IPv4 network such as master_net=10.0.0.0/16");
  };
  if (slash == std::string_view::npos) return bad();
  const auto bits = parse_number<std::uint32_t>(value.substr(slash + 1));
  if (!bits || *bits > 32) return bad();
  std::uint32_t parts = 0;
  std::string_view addr = value.substr(0, slash);
  while (true) {
    const auto dot = addr.find('.');
    const auto octet = parse_number<std::uint32_t>(addr.substr(0, dot));
    if (!octet || *octet > 255) return bad();
    ++parts;
    if (dot == std::string_view::npos) break;
    addr.remove_prefix(dot + 1);
  }
  if (parts != 4) return bad();
  return std::string(value);
}

}  // namespace

Result<bool> parse_env_switch(std::string_view value) {
  if (value == "on") return true;
  if (value == "off") return false;
  return fail(fmt::format("invalid value '{}'", value), "--trn-env", "use --trn-env=on or --trn-env=off");
}

Result<CoreChoice> parse_cores(std::string_view value) {
  if (value == "auto") return CoreChoice{CoreMode::automatic};
  if (value == "per-node") return CoreChoice{CoreMode::per_node};
  if (value == "per-task") return CoreChoice{CoreMode::per_task};
  if (const auto n = parse_number<std::uint32_t>(value); n && *n >= 1 && *n <= 1024)
    return CoreChoice{CoreMode::fixed, *n};
  return fail(fmt::format("invalid value '{}'", value), "--trn-cores",
              "use per-node (one task per node runs torchrun), per-task, or a number of cores per task");
}

Result<EfaMode> parse_efa(std::string_view value) {
  if (value == "auto") return EfaMode::automatic;
  if (value == "on") return EfaMode::on;
  if (value == "off") return EfaMode::off;
  return fail(fmt::format("invalid value '{}'", value), "--trn-efa", "use auto, on or off");
}

Result<std::string> parse_cache(std::string_view value) {
  const bool absolute = value.starts_with('/');
  const bool s3 = value.starts_with("s3://") && value.size() > 5;
  if ((!absolute && !s3) || has_control_char(value) || value.size() > 4096)
    return fail(fmt::format("invalid compile cache '{}'", value), "--trn-cache",
                "give an absolute directory or an s3:// URL");
  return std::string(value);
}

Result<LaunchMode> parse_launch(std::string_view value) {
  if (value == "auto") return LaunchMode::automatic;
  if (value == "torchrun") return LaunchMode::torchrun;
  return fail(fmt::format("invalid value '{}'", value), "--trn-launch",
              "use torchrun (the node's one task runs torchrun with TorchNeuron workers) or auto");
}

Result<std::uint16_t> parse_root_comm(std::optional<std::string_view> value, std::uint16_t default_port) {
  if (!value || value->empty()) return default_port;
  if (const auto port = parse_port(*value)) return *port;
  return fail(fmt::format("invalid port '{}'", *value), "--trn-root-comm",
              "use --trn-root-comm for the default port or --trn-root-comm=PORT with PORT from 1 to 65535");
}

Result<void> apply_option(UserOptions& opts, std::string_view name, std::optional<std::string_view> value,
                          std::uint16_t default_root_comm_port) {
  const std::string_view v = value.value_or("");
  if (name == "trn-env") {
    auto r = parse_env_switch(v);
    if (!r) return std::unexpected(r.error());
    opts.enabled = *r;
  } else if (name == "trn-verbose") {
    opts.verbose = true;
  } else if (name == "trn-preflight") {
    opts.preflight = true;
  } else if (name == "trn-cores") {
    auto r = parse_cores(v);
    if (!r) return std::unexpected(r.error());
    opts.cores = r->mode;
    opts.cores_per_task = r->per_task;
  } else if (name == "trn-efa") {
    auto r = parse_efa(v);
    if (!r) return std::unexpected(r.error());
    opts.efa = *r;
  } else if (name == "trn-cache") {
    auto r = parse_cache(v);
    if (!r) return std::unexpected(r.error());
    opts.cache = std::move(*r);
  } else if (name == "trn-launch") {
    auto r = parse_launch(v);
    if (!r) return std::unexpected(r.error());
    opts.launch = *r;
  } else if (name == "trn-root-comm") {
    auto r = parse_root_comm(value, default_root_comm_port);
    if (!r) return std::unexpected(r.error());
    opts.root_comm_port = *r;
  } else {
    return fail(fmt::format("unknown option '--{}'", name), "trnslurm");
  }
  return {};
}

Result<SiteSettings> parse_plugstack_args(const std::vector<std::string>& args) {
  SiteSettings site;
  auto& d = site.defaults;
  const std::string where = "trnslurm: plugstack.conf";
  for (const auto& arg : args) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(fmt::format("argument '{}' is not key=value", arg), where,
                  "see docs/plugin.md for the keys");
    const std::string_view key = std::string_view(arg).substr(0, eq);
    const std::string_view value = std::string_view(arg).substr(eq + 1);
    auto bad = [&](std::string_view hint) {
      return fail(fmt::format("invalid value '{}' for '{}'", value, key), where, std::string(hint));
    };
    if (key == "root" || key == "state_dir" || key == "instances") {
      if (!value.starts_with('/') || has_control_char(value))
        return bad("use an absolute path (%n = node name)");
      if (auto probe = expand_node_pattern(value, "n"); !probe) return std::unexpected(probe.error());
      (key == "root" ? site.root : key == "state_dir" ? site.state_dir : site.instances) = std::string(value);
    } else if (key == "cores") {
      auto r = parse_cores(value);
      if (!r) return bad("use auto, per-node, per-task or a number of cores per task");
      d.cores = r->mode;
      d.cores_per_task = r->per_task;
      d.cores_from = "plugstack.conf cores=";
    } else if (key == "efa") {
      auto r = parse_efa(value);
      if (!r) return bad("use auto, on or off");
      d.efa = *r;
      d.efa_from = "plugstack.conf efa=";
    } else if (key == "env") {
      auto r = parse_env_switch(value);
      if (!r) return bad("use on or off");
      d.enabled = *r;
    } else if (key == "cache") {
      auto r = parse_cache(value);
      if (!r) return bad("give an absolute directory or an s3:// URL");
      d.cache = std::move(*r);
      d.cache_from = "plugstack.conf cache=";
    } else if (key == "preflight_drain") {
      if (value != "yes" && value != "no") return bad("use yes or no");
      site.preflight_drain = value == "yes";
    } else if (key == "cache_mode") {
      if (value == "shared")
        d.cache_mode = CacheMode::shared;
      else if (value == "per-host")
        d.cache_mode = CacheMode::per_host;
      else
        return bad("use shared or per-host");
    } else if (key == "master_port" || key == "root_comm_port") {
      const auto port = parse_port(value);
      if (!port) return bad("use a port from 1 to 65535");
      (key == "master_port" ? d.master_port : d.root_comm_default_port) = *port;
    } else if (key == "master_addr") {
      if (value == "resolve")
        d.resolve_master = true;
      else if (value == "name")
        d.resolve_master = false;
      else
        return bad("use resolve or name");
    } else if (key == "master_net") {
      auto r = parse_cidr(value);
      if (!r) return std::unexpected(r.error());
      d.master_net = std::move(*r);
    } else if (key == "lnc") {
      if (value != "1" && value != "2") return bad("use 1 or 2");
      d.lnc = value == "1" ? 1U : 2U;
    } else if (key == "malloc_arena_max" || key == "inflight") {
      auto r = parse_count(key, value);
      if (!r) return std::unexpected(r.error());
      (key == "inflight" ? d.inflight : d.malloc_arena_max) = std::move(*r);
    } else if (key == "one_thread_per_core") {
      auto r = parse_flag01(key, value);
      if (!r) return std::unexpected(r.error());
      d.one_thread_per_core = std::move(*r);
    } else if (key == "ranks_per_network_proxy") {
      auto r = parse_count(key, value);
      if (!r) return std::unexpected(r.error());
      d.ranks_per_network_proxy = std::move(*r);
    } else if (key == "stochastic_rounding" || key == "fuse_softmax") {
      auto r = parse_flag01(key, value);
      if (!r) return std::unexpected(r.error());
      (key == "fuse_softmax" ? d.fuse_softmax : d.stochastic_rounding) = std::move(*r);
    } else {
      return fail(
          fmt::format("unknown argument '{}'", key), where,
          "known: root, state_dir, instances, env, cores, efa, cache, cache_mode, master_port, master_addr, "
          "master_net, root_comm_port, lnc, malloc_arena_max, inflight, stochastic_rounding, "
          "fuse_softmax, one_thread_per_core, ranks_per_network_proxy, preflight_drain");
    }
  }
  return site;
}

EnvSettings merge(const SiteSettings& site, const UserOptions& opts) {
  EnvSettings s = site.defaults;
  if (opts.enabled) s.enabled = *opts.enabled;
  if (opts.verbose) s.verbose = *opts.verbose;
  if (opts.cores) {
    s.cores = *opts.cores;
    s.cores_per_task = opts.cores_per_task.value_or(0);
    s.cores_from = "--trn-cores";
  }
  if (opts.efa) {
    s.efa = *opts.efa;
    s.efa_from = "--trn-efa";
  }
  if (opts.cache) {
    s.cache = *opts.cache;
    s.cache_from = "--trn-cache";
  }
  if (opts.launch) s.launch = *opts.launch;
  if (opts.root_comm_port) {
    s.root_comm_port = *opts.root_comm_port;
    s.root_comm_from = "--trn-root-comm";
  }
  return s;
}

Result<std::string> expand_node_pattern(std::string_view pattern, std::string_view node) {
  // The node name becomes one path component: nothing that could climb out of the admin's tree.
  if (node.empty() || node == "." || node == ".." || node.find('/') != std::string_view::npos)
    return fail(fmt::format("node name '{}' cannot stand for %n in a path", node),
                "trnslurm: plugstack.conf");
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (next == 'n')
      out += node;
    else if (next == '%')
      out += '%';
    else
      return fail(fmt::format("'{}' has an unknown % escape", pattern), "trnslurm: plugstack.conf",
                  "only %n (the node's name) and %% are expanded");
    ++i;
  }
  return out;
}

std::string_view to_string(CoreMode mode) {
  switch (mode) {
    case CoreMode::automatic:
      return "auto";
    case CoreMode::per_node:
      return "per-node";
    case CoreMode::per_task:
      return "per-task";
    case CoreMode::fixed:
      return "fixed";
  }
  return "?";
}

std::string_view to_string(LaunchMode mode) {
  return mode == LaunchMode::torchrun ? "torchrun" : "auto";
}

std::string_view to_string(EfaMode mode) {
  switch (mode) {
    case EfaMode::automatic:
      return "auto";
    case EfaMode::on:
      return "on";
    case EfaMode::off:
      return "off";
  }
  return "?";
}

}  // namespace trnslurm
