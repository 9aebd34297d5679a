#include "trnslurm/health/node_selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <utility>

namespace trnslurm::health {

namespace {

// The characters sinfo appends to a state (sinfo(1), NODE STATE CODES) that keep a node from
// running a job now, and what each means. '-' (planned by the backfill scheduler) and '+' (more
// states follow) do not.
constexpr std::array<std::pair<char, std::string_view>, 8> blocking_flags{{
    {'*', "not responding"},
    {'~', "powered down"},
    {'#', "powering up"},
    {'!', "to be powered down"},
    {'%', "powering down"},
    {'$', "in a maintenance reservation"},
    {'@', "to be rebooted"},
    {'^', "rebooting"},
}};

// Base states in which Slurm starts a job on the node (at once or when its CPUs free up).
constexpr std::array<std::string_view, 5> usable_states{"idle", "mixed", "allocated", "completing",
                                                        "planned"};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const auto end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace

std::vector<std::string> sinfo_nodes_command() {
  return {"sinfo", "--noheader", "--Node", "--format=%N|%P|%T"};
}

std::string unusable_reason(std::string_view state) {
  std::vector<std::string> why;
  std::string_view base = state;
  while (!base.empty()) {
    const char c = base.back();
    const auto flag = std::ranges::find(blocking_flags, c, &std::pair<char, std::string_view>::first);
    if (flag != blocking_flags.end())
      why.emplace(why.begin(), flag->second);
    else if (c != '-' && c != '+')
      break;
    base.remove_suffix(1);
  }
  // A state joined with '+' (e.g. "idle+drain" from a newer sinfo) is usable only if every part is.
  for (const auto part : split(base, '+'))
    if (std::ranges::find(usable_states, part) == usable_states.end()) {
      why.insert(why.begin(), std::string(part.empty() ? std::string_view("no state") : part));
      break;
    }
  return fmt::format("{}", fmt::join(why, ", "));
}

Result<NodeSelection> select_nodes(std::string_view sinfo_output,
                                   const std::optional<std::string>& partition) {
  struct Line {
    std::string_view node, partition, state;
    bool is_default;
  };
  std::vector<Line> lines;
  std::vector<std::string> partitions;
  std::optional<std::string> default_partition;
  for (const auto raw : split(sinfo_output, '\n')) {
    if (raw.empty()) continue;
    const auto f = split(raw, '|');
    if (f.size() != 3 || f[0].empty() || f[1].empty())
      return fail(ErrorKind::slurm, fmt::format("unexpected line from sinfo: '{}'", raw), "sinfo",
                  "expected NODE|PARTITION|STATE; is this Slurm's sinfo?");
    Line l{f[0], f[1], f[2], f[1].ends_with('*')};
    if (l.is_default) l.partition.remove_suffix(1);
    if (l.is_default) default_partition = std::string(l.partition);
    if (std::ranges::find(partitions, l.partition) == partitions.end()) partitions.emplace_back(l.partition);
    lines.push_back(l);
  }
  const auto known = fmt::format("{}", fmt::join(partitions, ", "));
  if (!partition && !default_partition)
    return fail(
        "the cluster has no default partition", "--partition",
        partitions.empty() ? std::string("sinfo lists no partition at all") : "name one of: " + known);
  NodeSelection out{partition.value_or(default_partition.value_or("")), {}, {}};
  if (std::ranges::find(partitions, out.partition) == partitions.end())
    return fail(fmt::format("no partition '{}'", out.partition), "--partition",
                partitions.empty() ? std::string("sinfo lists no partition at all") : "partitions: " + known);
  for (const auto& l : lines) {
    if (l.partition != out.partition) continue;
    const std::string node(l.node);
    if (std::ranges::find(out.usable, node) != out.usable.end() ||
        std::ranges::find(out.skipped, node, &SkippedNode::node) != out.skipped.end())
      continue;
    if (auto why = unusable_reason(l.state); why.empty())
      out.usable.push_back(node);
    else
      out.skipped.push_back({node, std::string(l.state), std::move(why)});
  }
  return out;
}

}  // namespace trnslurm::health
