#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "trnslurm/util/process.hpp"

using namespace trnslurm;
using namespace std::chrono_literals;

namespace {

// A process that is gone or a zombie (killed, not yet reaped by whoever adopted it).
bool dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
}

// This process's signal state changed for one test, and put back.
class SignalsChanged {
 public:
  SignalsChanged() {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &old_mask_);
    old_int_ = signal(SIGINT, SIG_IGN);
    old_term_ = signal(SIGTERM, SIG_IGN);
  }
  ~SignalsChanged() {
    signal(SIGTERM, old_term_);
    signal(SIGINT, old_int_);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalsChanged(const SignalsChanged&) = delete;
  SignalsChanged& operator=(const SignalsChanged&) = delete;

 private:
  sigset_t old_mask_{};
  sighandler_t old_int_ = SIG_DFL;
  sighandler_t old_term_ = SIG_DFL;
};

std::string status_line(const std::string& status, const std::string& key) {
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(key + ":")) return line;
  }
  return "";
}

}  // namespace

TEST_CASE("process: exit status, stdout and stderr apart, exactly the environment given") {
  const auto ran = run_process({"/bin/sh", "-c", "echo \"[$FOO][$HOME]\"; echo err >&2; exit 3"},
                               RunOptions{.env = {{"FOO=bar"}}});
  REQUIRE(ran);
  CHECK(ran->exit_code == 3);
  CHECK(ran->signal == 0);
  CHECK_FALSE(ran->timed_out);
  CHECK(ran->out == "[bar][]\n");
  CHECK(ran->err == "err\n");
}

TEST_CASE("process: a child killed by a signal is reported as the signal, as a shell does") {
  const auto ran = run_process({"/bin/sh", "-c", "kill -TERM $$"});
  REQUIRE(ran);
  CHECK(ran->signal == SIGTERM);
  CHECK(ran->exit_code == 128 + SIGTERM);
  CHECK_FALSE(ran->timed_out);
}

TEST_CASE("process: at the time limit the child and its grandchild are killed") {
  const auto started = std::chrono::steady_clock::now();
  // The grandchild's pid first, then both sleep far past the limit.
  const auto ran = run_process({"/bin/sh", "-c", "sleep 30 & echo $!; wait"}, RunOptions{.limit = 300ms});
  const auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(ran);
  CHECK(ran->timed_out);
  CHECK(ran->signal == SIGKILL);
  CHECK(took < 20s);  // not the 30 s of the sleep
  const pid_t grandchild = std::stoi(ran->out);
  REQUIRE(grandchild > 0);
  // Killed with its group: give init a moment to reap it.
  for (int i = 0; i < 100 && !dead(grandchild); ++i) usleep(10'000);
  CHECK(dead(grandchild));
}

TEST_CASE("process: a child writing 8 MiB to each of stdout and stderr is read whole, while it runs") {
  constexpr std::size_t size = 8U << 20U;
  // All of stdout before any of stderr: a runner that read one pipe to its end, or read only
  // after the exit, would leave the child blocked on a full pipe until the limit.
  const auto ran = run_process(
      {"/bin/sh", "-c", "head -c 8388608 /dev/zero | tr '\\0' o; head -c 8388608 /dev/zero | tr '\\0' e >&2"},
      RunOptions{.limit = 60s});
  REQUIRE(ran);
  CHECK_FALSE(ran->timed_out);
  CHECK(ran->exit_code == 0);
  CHECK(ran->out.size() == size);
  CHECK(ran->err.size() == size);
  CHECK(std::all_of(ran->out.begin(), ran->out.end(), [](char c) { return c == 'o'; }));
  CHECK(std::all_of(ran->err.begin(), ran->err.end(), [](char c) { return c == 'e'; }));
}

TEST_CASE("process: a program not in PATH is a clear error, not an exit code") {
  const auto missing = run_process({"trnslurm-test-no-such-program", "--version"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what == "'trnslurm-test-no-such-program' not found in PATH");
  CHECK(missing.error().where == "PATH");
  // Looked up in the PATH of the environment given: sh is not in /nonexistent.
  const auto elsewhere = run_process({"sh", "-c", "true"}, RunOptions{.env = {{"PATH=/nonexistent"}}});
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().what == "'sh' not found in PATH");
  // A bare name found in PATH runs.
  const auto found = run_process({"sh", "-c", "exit 5"}, RunOptions{.env = {{"PATH=/usr/bin:/bin"}}});
  REQUIRE(found);
  CHECK(found->exit_code == 5);
  // A path that does not exist: Boost reports the failed exec.
  const auto no_file = run_process({"/nonexistent/scontrol"});
  REQUIRE_FALSE(no_file);
  CHECK(no_file.error().what.find("/nonexistent/scontrol") != std::string::npos);
  CHECK_FALSE(run_process({}));
}

TEST_CASE("process: the child's signals are at their defaults and unblocked, whatever ours are") {
  const SignalsChanged changed;  // SIGTERM and SIGUSR1 blocked, SIGINT and SIGTERM ignored here
  const auto ran = run_process({"/bin/cat", "/proc/self/status"});
  REQUIRE(ran);
  REQUIRE(ran->exit_code == 0);
  CHECK(status_line(ran->out, "SigBlk") == "SigBlk:\t0000000000000000");
  CHECK(status_line(ran->out, "SigIgn") == "SigIgn:\t0000000000000000");
}

TEST_CASE("process: the child inherits no descriptor of ours") {
  const int fd = open("/dev/null", O_RDONLY);  // no O_CLOEXEC: would be inherited by default
  REQUIRE(fd > 2);
  const auto ran = run_process({"/bin/sh", "-c", "ls /proc/$$/fd"});
  close(fd);
  REQUIRE(ran);
  std::istringstream listed(ran->out);
  std::string names;
  for (std::string n; listed >> n;) names += n + " ";
  CHECK(names == "0 1 2 ");
}
