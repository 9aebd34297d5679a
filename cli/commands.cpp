#include "commands.hpp"

#include <array>

namespace trnslurm::cli {
namespace {

struct Entry {
  std::string_view name;  // as its add_* function names it
  Command (*add)(CLI::App&);
};

// In the order `trnslurm --help` lists them.
constexpr std::array entries{
    Entry{"init", add_init},           Entry{"recipes", add_recipes},
    Entry{"instances", add_instances}, Entry{"plan", add_plan},
    Entry{"submit", add_submit},       Entry{"status", add_status},
    Entry{"watch", add_watch},         Entry{"logs", add_logs},
    Entry{"cancel", add_cancel},       Entry{"list", add_list},
    Entry{"report", add_report},       Entry{"cache", add_cache},
    Entry{"export", add_export},       Entry{"env", add_env},
    Entry{"doctor", add_doctor},       Entry{"health-node", add_health_node},
    Entry{"preflight", add_preflight}, Entry{"steps", add_steps},
};

}  // namespace

std::vector<Command> register_commands(CLI::App& app, std::string_view first_arg) {
  // Building CLI11's options for all sixteen commands costs as much as a third of what `submit`
  // does itself (callgrind), so a command line that starts with a command's name gets that
  // command alone. Anything else (--help, a typo) sees them all.
  for (const auto& e : entries)
    if (e.name == first_arg) return {e.add(app)};
  std::vector<Command> all;
  all.reserve(entries.size());
  for (const auto& e : entries) all.push_back(e.add(app));
  return all;
}

}  // namespace trnslurm::cli
