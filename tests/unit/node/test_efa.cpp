#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>

#include <fmt/format.h>
#include <filesystem>

#include <fstream>

#include "fixtures.hpp"
#include "trnslurm/node/efa.hpp"

using namespace trnslurm;
namespace fs = std::filesystem;

TEST_CASE("efa: the state file round-trips") {
  for (auto state : {EfaState::present, EfaState::absent, EfaState::unknown}) {
    const EfaProbe p{state, "why\nnot"};
    const auto back = parse_efa_state(format_efa_state(p));
    CHECK(back.state == state);
    CHECK(back.detail == "why not");
  }
  CHECK(parse_efa_state("garbage").state == EfaState::unknown);
  CHECK(parse_efa_state("state=sideways\n").state == EfaState::unknown);
}

TEST_CASE("efa: written by root, read back - refused when others can write") {
  if (test::skip_unless_root("the state directory must be root's")) return;
  const test::ScratchDir tmp;
  const auto dir = tmp / "state";
  REQUIRE(write_efa_state(dir, {EfaState::absent, "fi_getinfo: -61"}));
  const auto got = read_efa_state(dir);
  REQUIRE(got);
  CHECK(got->state == EfaState::absent);
  CHECK(got->detail == "fi_getinfo: -61");
  CHECK((fs::status(dir / "efa").permissions() & fs::perms::others_write) == fs::perms::none);

  chmod((dir / "efa").c_str(), 0666);
  const auto loose = read_efa_state(dir);
  REQUIRE_FALSE(loose);
  CHECK(loose.error().what.find("not trusted") != std::string::npos);
  chmod((dir / "efa").c_str(), 0644);
  chmod(dir.c_str(), 0777);
  CHECK_FALSE(read_efa_state(dir));
}

TEST_CASE("efa: no probe result is an error the caller turns into unknown") {
  const test::ScratchDir tmp;
  const auto r = read_efa_state(tmp / "missing");
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("has not probed") != std::string::npos);
}

TEST_CASE("efa: the real probe answers (absent on a machine without an EFA device)") {
  const auto p = probe_efa();
  CHECK_FALSE(p.detail.empty());
  // This machine has libfabric without an EFA device: the efa provider answers -61.
  if (fs::exists("/sys/class/infiniband")) return;
  CHECK(p.state == EfaState::absent);
}

TEST_CASE("efa: the slurmd's probe runs in a child, which writes the answer - a hang or a crash is unknown") {
  if (test::skip_unless_root("the state directory must be root's")) return;
  const test::ScratchDir tmp;
  const auto dir = tmp / "state";
  const pid_t parent = getpid();
  // The child's answer, written by the child (the probe runs in another process than ours).
  auto r = probe_efa_in_child(dir, std::chrono::seconds(10), [parent] {
    return EfaProbe{EfaState::present, getpid() != parent ? "probed in a child" : "probed in the caller"};
  });
  REQUIRE(r);
  CHECK(r->state == EfaState::present);
  CHECK(r->detail == "probed in a child");
  CHECK(read_efa_state(dir)->detail == "probed in a child");
  // A provider that aborts (a fork handler without copy-on-fork support): unknown, and we live on.
  r = probe_efa_in_child(dir, std::chrono::seconds(10), []() -> EfaProbe {
    std::signal(SIGABRT, SIG_DFL);  // not Catch's handler, which would report from the child
    std::abort();
  });
  REQUIRE(r);
  CHECK(r->state == EfaState::unknown);
  CHECK(r->detail.find("died of signal 6") != std::string::npos);
  CHECK(read_efa_state(dir)->state == EfaState::unknown);
  // One that hangs is killed at the limit.
  r = probe_efa_in_child(dir, std::chrono::milliseconds(300), []() -> EfaProbe {
    pause();
    return {};
  });
  REQUIRE(r);
  CHECK(r->state == EfaState::unknown);
  CHECK(r->detail == "the probe did not finish within 300 ms: killed");
  // The real probe, through the child: the same answer as in this process.
  r = probe_efa_in_child(dir, std::chrono::seconds(30));
  REQUIRE(r);
  CHECK(r->state == probe_efa().state);
}
