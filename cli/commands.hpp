#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string_view>
#include <vector>

#include "exit_codes.hpp"

namespace trnslurm::cli {

// A subcommand: CLI11 fills the options bound by its add_* function, then `run` does the work
// and returns the exit code. Each cmd_*.cpp has the same shape: a `struct Options` (what the
// command line sets), an `int run(const Options&)` (the work, printing through output.hpp), and
// its add_* function, which registers the options and hands `run` to main.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_init(CLI::App& app);
Command add_recipes(CLI::App& app);
Command add_instances(CLI::App& app);
Command add_plan(CLI::App& app);
Command add_env(CLI::App& app);
Command add_doctor(CLI::App& app);
Command add_health_node(CLI::App& app);
Command add_preflight(CLI::App& app);
Command add_steps(CLI::App& app);
Command add_submit(CLI::App& app);
Command add_status(CLI::App& app);
Command add_watch(CLI::App& app);
Command add_logs(CLI::App& app);
Command add_cancel(CLI::App& app);
Command add_list(CLI::App& app);
Command add_report(CLI::App& app);
Command add_cache(CLI::App& app);
Command add_export(CLI::App& app);

// The subcommands, registered on `app` (the list lives in commands.cpp): the one `first_arg`
// names, or all of them when it names none.
std::vector<Command> register_commands(CLI::App& app, std::string_view first_arg);

}  // namespace trnslurm::cli
