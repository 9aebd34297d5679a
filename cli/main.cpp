// The one place where exceptions become messages and exit codes (docs/cli.md, "Exit codes").
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "trnslurm/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"trnslurm: train LLMs on AWS Trainium with Slurm", "trnslurm"};
  app.set_version_flag("-V,--version",
                       fmt::format("trnslurm {} (built against Slurm {})", trnslurm::version,
                                   trnslurm::slurm_build_version));
  app.require_subcommand(0, 1);
  app.footer("Run 'trnslurm COMMAND --help' for a command's options and examples.");

  const auto commands = trnslurm::cli::register_commands(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return trnslurm::cli::exit_usage;
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0; every other parse error is bad input.
    return app.exit(e) == 0 ? trnslurm::cli::exit_ok : trnslurm::cli::exit_usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trnslurm: internal error: %s\n", e.what());
    return trnslurm::cli::exit_internal;
  }
}
