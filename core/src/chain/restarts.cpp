#include "trnslurm/chain/restarts.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "trnslurm/util/file.hpp"

namespace trnslurm {
namespace {

template <class T>
std::optional<T> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return std::nullopt;
  return static_cast<T>(it->get<std::int64_t>());
}

}  // namespace

std::filesystem::path restarts_path(const std::filesystem::path& run_dir) {
  return run_dir / "logs" / "train-restarts.jsonl";
}

Result<void> append_restart(const std::filesystem::path& run_dir, const RestartEvent& event) {
  return append_line(restarts_path(run_dir), to_json(event).dump() + "\n", "the restarts log");
}

std::vector<RestartEvent> parse_restarts(std::string_view jsonl) {
  std::vector<RestartEvent> out;
  std::istringstream lines{std::string(jsonl)};
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("event") || !j["event"].is_string()) continue;
    RestartEvent e;
    e.event = j["event"].get<std::string>();
    if (j.contains("cause") && j["cause"].is_string()) e.cause = j["cause"].get<std::string>();
    e.restart = number<std::uint32_t>(j, "restart").value_or(0);
    e.job = number<std::uint64_t>(j, "job").value_or(0);
    e.time = number<std::int64_t>(j, "time").value_or(0);
    e.resumed_from = number<std::uint64_t>(j, "resumed_from");
    e.checkpoint = number<std::uint64_t>(j, "checkpoint");
    e.max_restarts = number<std::uint32_t>(j, "max_restarts");
    e.max_exclusions = number<std::uint32_t>(j, "max_exclusions");
    if (j.contains("nodes") && j["nodes"].is_array())
      for (const auto& n : j["nodes"])
        if (n.is_string()) e.nodes.push_back(n.get<std::string>());
    if (j.contains("why") && j["why"].is_string()) e.why = j["why"].get<std::string>();
    if (j.contains("drain") && j["drain"].is_string()) e.drain = j["drain"].get<std::string>();
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<RestartEvent> read_restarts(const std::filesystem::path& run_dir) {
  // A line per restart: max_restarts is at most a few hundred.
  const auto text = read_file(restarts_path(run_dir), std::size_t{16} << 20);
  return text ? parse_restarts(*text) : std::vector<RestartEvent>{};
}

std::optional<RestartEvent> last_gave_up(const std::vector<RestartEvent>& events) {
  const auto it = std::find_if(events.rbegin(), events.rend(),
                               [](const RestartEvent& e) { return e.event == "gave-up"; });
  return it == events.rend() ? std::nullopt : std::optional<RestartEvent>(*it);
}

nlohmann::json to_json(const RestartEvent& e) {
  nlohmann::json j{
      {"event", e.event}, {"cause", e.cause}, {"restart", e.restart}, {"job", e.job}, {"time", e.time}};
  if (e.resumed_from) j["resumed_from"] = *e.resumed_from;
  if (e.checkpoint) j["checkpoint"] = *e.checkpoint;
  if (e.max_restarts) j["max_restarts"] = *e.max_restarts;
  if (e.max_exclusions) j["max_exclusions"] = *e.max_exclusions;
  if (!e.nodes.empty()) j["nodes"] = e.nodes;
  if (!e.why.empty()) j["why"] = e.why;
  if (!e.drain.empty()) j["drain"] = e.drain;
  return j;
}

std::string describe_cause(std::string_view cause) {
  if (cause == "time-limit") return "time limit (USR1, checkpoint, requeue)";
  if (cause == "node-failure") return "node failure";
  if (cause == "preempted") return "terminated by Slurm (preemption or scontrol requeue)";
  if (cause == "preflight") return "a node failed the pre-flight health checks (excluded, requeued)";
  if (cause == "slurm-requeue") return "requeued by Slurm (node failure, preemption or scontrol requeue)";
  return std::string(cause);
}

}  // namespace trnslurm
