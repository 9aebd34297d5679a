#include "trnslurm/health/collective.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ranges>
#include <set>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::health {

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < line.size();) {
    const auto start = line.find_first_not_of(" \t\r", i);
    if (start == std::string_view::npos) break;
    const auto end = std::min(line.find_first_of(" \t\r", start), line.size());
    out.push_back(line.substr(start, end - start));
    i = end;
  }
  return out;
}

std::string_view trimmed(std::string_view line) {
  const auto w = words(line);
  if (w.empty()) return {};
  return {w.front().data(), static_cast<std::size_t>(w.back().data() + w.back().size() - w.front().data())};
}

constexpr std::string_view average_label = "Avg bus bandwidth:";

}  // namespace

NccomResult parse_nccom_output(std::string_view output) {
  NccomResult r;
  // Column numbers found in the header; none until it is read (plain values: g++ -O2 warns about
  // optionals here).
  constexpr auto none = std::string_view::npos;
  std::size_t size_col = none;
  std::size_t busbw_col = none;
  std::string first_line;
  for (const auto line_range : std::views::split(output, '\n')) {
    const std::string_view line(line_range.begin(), line_range.end());
    const auto w = words(line);
    if (w.empty()) continue;
    if (first_line.empty()) first_line = std::string(trimmed(line));
    if (const auto at = line.find(average_label); at != std::string_view::npos) {
      auto figure = trimmed(line.substr(at + average_label.size()));
      if (figure.ends_with("GB/s")) figure.remove_suffix(4);
      r.avg_busbw = parse_number<double>(figure);
      if (!r.avg_busbw) r.failures.push_back(fmt::format("unreadable average line '{}'", trimmed(line)));
      continue;
    }
    if (line.find("errors found") != std::string_view::npos) {
      r.failures.emplace_back(trimmed(line));
      continue;
    }
    if (size_col == none) {
      for (std::size_t i = 0; i < w.size(); ++i) {
        if (w[i] == "size(B)") size_col = i;
        if (w[i] == "busbw(GB/s)") busbw_col = i;
      }
      if (busbw_col == none) size_col = none;
      continue;
    }
    if (w.size() > 1 && w[1] == "Failure") {
      r.failures.push_back(fmt::format("size {}: {}", w[0], trimmed(line.substr(line.find("Failure")))));
      continue;
    }
    const auto size = w.size() > size_col ? parse_number<std::uint64_t>(w[size_col]) : std::nullopt;
    const auto busbw = w.size() > busbw_col ? parse_number<double>(w[busbw_col]) : std::nullopt;
    if (size && busbw)
      r.rows.push_back({size.value_or(0), busbw.value_or(0.0)});
    else
      r.failures.push_back(fmt::format("unexpected line '{}'", trimmed(line)));
  }
  if (size_col == none)
    r.failures.push_back(first_line.empty() ? std::string("no output")
                                            : fmt::format("no result table: '{}'", first_line));
  else if (!r.avg_busbw && r.failures.empty())
    r.failures.emplace_back("the output ends before its average line (cut short?)");
  return r;
}

std::optional<ExpectedBusbw> expected_busbw(const InstanceType& type) {
  if (type.collective_busbw_gb_per_s.value)
    return ExpectedBusbw{*type.collective_busbw_gb_per_s.value,
                         fmt::format("collective_busbw_gb_per_s of {}", type.name)};
  const double gbps = type.efa_gbps.value.value_or(0.0);
  if (gbps <= 0) return std::nullopt;
  const double gib = gbps * 1e9 / 8 * efa_share / static_cast<double>(1ULL << 30U);
  return ExpectedBusbw{gib, fmt::format("{:.0f}% of {}'s {:.0f} Gbps EFA", efa_share * 100, type.name, gbps)};
}

std::vector<std::vector<std::size_t>> ring_rounds(std::size_t nodes) {
  if (nodes < 3) return {};
  std::vector<std::vector<std::size_t>> rounds(nodes % 2 == 0 ? 2 : 3);
  for (std::size_t e = 0; e < nodes; ++e) {
    // Even edges, then odd ones; on an odd ring the last edge meets edge 0 and edge n-2.
    const std::size_t round = (nodes % 2 == 1 && e == nodes - 1) ? 2 : e % 2;
    rounds[round].push_back(e);
  }
  return rounds;
}

RingVerdict attribute_ring(const std::vector<std::optional<double>>& edges, double slow_factor) {
  RingVerdict v;
  const auto n = edges.size();
  for (const auto& e : edges) v.fastest = std::max(v.fastest, e.value_or(0.0));
  const auto slow = [&](std::size_t e) {
    const auto& value = edges[e % n];
    return !value || *value * slow_factor < v.fastest;
  };
  std::set<std::size_t> explained;
  for (std::size_t i = 0; i < n; ++i)
    if (slow((i + n - 1) % n) && slow(i)) {
      v.slow_nodes.push_back(i);
      explained.insert((i + n - 1) % n);
      explained.insert(i);
    }
  for (std::size_t e = 0; e < n; ++e)
    if (slow(e) && !explained.contains(e)) v.slow_pairs.push_back(e);
  return v;
}

bool needs_pairs(const NccomResult& whole, const std::optional<ExpectedBusbw>& expected, std::size_t nodes) {
  if (nodes < 3) return false;
  if (!whole.ok()) return true;
  return expected && whole.avg_busbw.value_or(0.0) < expected->gib_per_s;
}

namespace {

std::string figure(const NccomResult& r) {
  return r.ok() ? fmt::format("{:.2f} GB/s", r.avg_busbw.value_or(0.0))
                : "failed (" + r.failures.front() + ")";
}

}  // namespace

std::vector<Finding> judge_collective(const std::vector<std::string>& nodes, const NccomResult& whole,
                                      const std::optional<ExpectedBusbw>& expected,
                                      const std::vector<NccomResult>& pairs) {
  const auto n = nodes.size();
  const std::string whole_text =
      fmt::format("nccom-test all_reduce across {} nodes: {}", n, figure(whole)) +
      (expected ? fmt::format(" bus bandwidth, expected at least {:.2f} GB/s ({})", expected->gib_per_s,
                              expected->why)
                : std::string(" bus bandwidth (no expected figure: the type has no EFA bandwidth)"));
  const bool low = !whole.ok() || (expected && whole.avg_busbw.value_or(0.0) < expected->gib_per_s);
  std::vector<Finding> out(n, Finding{"collective", Status::ok, whole_text});
  if (!low) return out;
  if (pairs.size() != n) {
    // Two nodes are one pair: which of them is at fault cannot be told.
    for (auto& f : out) {
      f.status = whole.ok() ? Status::warn : Status::fail;
      if (n == 2) f.detail += "; one pair, so the slow node cannot be told";
    }
    return out;
  }
  if (std::ranges::none_of(pairs, &NccomResult::ok)) {
    // A failure every run shares is the tool's or the network's set-up (nccom-test missing, hosts
    // it cannot reach), not one node's: excluding every node would stop the job for nothing.
    for (auto& f : out) {
      f.status = Status::warn;
      f.detail +=
          fmt::format("; every pair of the ring failed too ({}): not one node", figure(pairs.front()));
    }
    return out;
  }
  std::vector<std::optional<double>> edges;
  edges.reserve(n);
  for (const auto& p : pairs) edges.push_back(p.ok() ? p.avg_busbw : std::nullopt);
  const auto v = attribute_ring(edges);
  const auto pair_text = [&](std::size_t e) {
    return fmt::format("{}-{} {}", nodes[e], nodes[(e + 1) % n], figure(pairs[e]));
  };
  for (const auto i : v.slow_nodes)
    out[i] = {"collective", Status::fail,
              fmt::format("this node is slow: its pairs {} and {}, the fastest pair {:.2f} GB/s",
                          pair_text((i + n - 1) % n), pair_text(i), v.fastest)};
  for (const auto e : v.slow_pairs)
    for (const auto i : {e, (e + 1) % n})
      if (std::ranges::find(v.slow_nodes, i) == v.slow_nodes.end())
        out[i] = {"collective", pairs[e].ok() ? Status::warn : Status::fail,
                  fmt::format("pair {} is slow, the fastest pair {:.2f} GB/s", pair_text(e), v.fastest)};
  if (v.slow_nodes.empty() && v.slow_pairs.empty())
    for (auto& f : out) {
      f.status = whole.ok() ? Status::warn : Status::fail;
      f.detail +=
          fmt::format("; every pair of the ring alike (fastest {:.2f} GB/s): not one node", v.fastest);
    }
  return out;
}

Result<GlooRing> parse_gloo_ring(std::string_view line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  const auto bad = [&] {
    return fail(fmt::format("not the gloo collective's result: '{}'", line.substr(0, 200)), "collective",
                "scripts/cpu/health_collective.py prints it from rank 0");
  };
  if (!j.is_object() || !j.contains("gloo_ring")) return bad();
  const auto& r = j["gloo_ring"];
  try {
    GlooRing ring{r.at("nodes").get<std::vector<std::string>>(),
                  r.at("links_mib_per_s").get<std::vector<double>>(), r.at("bytes").get<std::uint64_t>(),
                  r.at("busbw").get<double>(), r.at("sum_ok").get<bool>()};
    if (ring.nodes.size() != ring.links_mib_per_s.size() || ring.nodes.empty()) return bad();
    return ring;
  } catch (const nlohmann::json::exception&) {
    return bad();
  }
}

std::vector<std::vector<Finding>> judge_gloo_ring(const GlooRing& ring) {
  const auto n = ring.nodes.size();
  const auto& links = ring.links_mib_per_s;
  std::vector<std::vector<Finding>> out(n);
  // Edge e joins node e and e + 1: link e + 1, timed at node e + 1.
  std::vector<std::optional<double>> edges;
  edges.reserve(n);
  for (std::size_t e = 0; e < n; ++e) edges.emplace_back(links[(e + 1) % n]);
  const auto v = n > 2 ? attribute_ring(edges) : RingVerdict{};
  const auto fastest = std::ranges::max(links);
  const auto link_text = [&](std::size_t i) {  // link i, into node i
    return fmt::format("{}->{} at {:.0f} MiB/s", ring.nodes[(i + n - 1) % n], ring.nodes[i], links[i]);
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!ring.sum_ok) out[i].push_back({"collective", Status::fail, "all_reduce gave a wrong sum"});
    if (std::ranges::find(v.slow_nodes, i) != v.slow_nodes.end())
      out[i].push_back({"collective", Status::fail,
                        fmt::format("this node is slow: its links {} and {}, the fastest {:.0f} MiB/s",
                                    link_text(i), link_text((i + 1) % n), fastest)});
    else if (std::ranges::find(v.slow_pairs, (i + n - 1) % n) != v.slow_pairs.end())
      out[i].push_back({"collective", Status::warn,
                        fmt::format("link {}, the fastest {:.0f} MiB/s", link_text(i), fastest)});
    if (out[i].empty())
      out[i].push_back(
          {"collective", Status::ok,
           fmt::format("gloo all_reduce of {} MiB on {} nodes: {:.2f} GB/s bus bandwidth; its link in "
                       "{:.0f} MiB/s",
                       ring.bytes >> 20U, n, ring.busbw, links[i])});
  }
  return out;
}

}  // namespace trnslurm::health
