// The one place where exceptions become messages and exit codes (docs/cli.md, "Exit codes").
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "trnslurm/version.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"trnslurm: train LLMs on AWS Trainium with Slurm", "trnslurm"};
  app.set_version_flag("-V,--version", fmt::format("trnslurm {} (built against Slurm {})", trnslurm::version,
                                                   trnslurm::slurm_build_version));
  app.require_subcommand(0, 1);
  app.footer(
      "Run 'trnslurm COMMAND --help' for a command's options and examples.\n"
      "Examples:\n"
      "  trnslurm init llama3-8b-trn2 && trnslurm plan --epochs 3\n"
      "  trnslurm submit && trnslurm watch\n"
      "Exit codes: 0 ok, 1 failed, 2 bad input, 3 still running (status, watch), 70 internal error.");

  const auto commands = trnslurm::cli::register_commands(app, argc > 1 ? argv[1] : "");

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      fmt::print("{}", app.help());
      return 0;
    }
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return trnslurm::cli::exit_code(trnslurm::ErrorKind::usage);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0; every other parse error is bad usage.
    return app.exit(e) == 0 ? trnslurm::cli::exit_ok : trnslurm::cli::exit_code(trnslurm::ErrorKind::usage);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // stdio, not fmt: nothing may throw out of the last handler.
    (void)std::fputs("trnslurm: internal error: ", stderr);
    (void)std::fputs(e.what(), stderr);
    (void)std::fputs("\n", stderr);
  } catch (...) {
    (void)std::fputs("trnslurm: internal error\n", stderr);
  }
  return trnslurm::cli::exit_code(trnslurm::ErrorKind::internal);
}
