// The one translation unit that includes Boost.Process (slow to compile).
#include "process.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/process/v2.hpp>

namespace trnslurm::cli {
namespace bp = boost::process::v2;
namespace asio = boost::asio;

namespace {

// Runs in the child between fork and exec.
struct OwnProcessGroup {
  bool enabled = false;
  template <class Launcher>
  bp::error_code on_exec_setup(Launcher&, const bp::filesystem::path&, const char* const*&) {
    if (enabled) ::setpgid(0, 0);
    return {};
  }
};

}  // namespace

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, RunOptions options) {
  if (argv.empty()) return fail("no command to run", "run_process");
  // A path is run as given (report's /usr/bin/python3); a bare name is looked up in PATH.
  auto exe = argv.front().find('/') != std::string::npos
                 ? decltype(bp::environment::find_executable(argv.front()))(argv.front())
                 : bp::environment::find_executable(argv.front());
  if (exe.empty()) {
    return fail(fmt::format("'{}' not found in PATH", argv.front()), "PATH",
                "install the Slurm client commands, or run on a node where they are available");
  }
  try {
    asio::io_context ctx;
    asio::readable_pipe out_pipe(ctx);
    asio::readable_pipe err_pipe(ctx);
    const std::vector<std::string> args(argv.begin() + 1, argv.end());
    bp::process proc(ctx, exe, args, bp::process_stdio{nullptr, out_pipe, err_pipe},
                     OwnProcessGroup{options.own_process_group});
    std::string out;
    std::string err;
    auto out_buf = asio::dynamic_buffer(out);
    auto err_buf = asio::dynamic_buffer(err);
    asio::async_read(out_pipe, out_buf, [](const bp::error_code&, std::size_t) {});
    asio::async_read(err_pipe, err_buf, [](const bp::error_code&, std::size_t) {});
    ctx.run();
    const int code = proc.wait();
    return ProcessOutput{code, std::move(out), std::move(err)};
  } catch (const bp::system_error& e) {
    return fail(fmt::format("cannot run {}: {}", argv.front(), e.what()), exe.string());
  }
}

}  // namespace trnslurm::cli
