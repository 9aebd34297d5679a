#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "../fixtures.hpp"
#include "trnslurm/progress/log_lines.hpp"

using namespace trnslurm;

namespace {
void write(const std::filesystem::path& p, const std::string& text, bool append = false) {
  std::ofstream out(p, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out << text;
}

struct Collected {
  std::vector<std::string> lines;
  LogRead read;
};

Collected collect(const std::filesystem::path& p, std::uint64_t from, LogReadLimits limits = {}) {
  Collected c;
  auto r = read_lines(
      p, from, [&](std::string_view l) { c.lines.emplace_back(l); }, limits);
  REQUIRE(r.has_value());
  c.read = *r;
  return c;
}
}  // namespace

TEST_CASE("log lines: only complete lines, then only what was added") {
  test::ScratchDir dir;
  const auto log = dir / "train.out";
  write(log, "one\ntwo\nthr");
  auto first = collect(log, 0);
  CHECK(first.lines == std::vector<std::string>{"one", "two"});
  CHECK(first.read.offset == 8);  // the half line waits for its newline
  CHECK(first.read.size == 11);
  write(log, "ee\nfour\n", true);
  auto second = collect(log, first.read.offset);
  CHECK(second.lines == std::vector<std::string>{"three", "four"});
  CHECK(second.read.offset == 19);
  auto nothing = collect(log, second.read.offset);
  CHECK(nothing.lines.empty());
  CHECK(nothing.read.offset == 19);
}

TEST_CASE("log lines: lines across chunk borders, and a last line once the writer is gone") {
  test::ScratchDir dir;
  const auto log = dir / "train.out";
  write(log, "alpha\nbravo\ncharlie\ndelta");
  for (std::size_t chunk : {1u, 2u, 3u, 5u, 7u, 64u}) {
    INFO(chunk);
    auto c = collect(log, 0, LogReadLimits{.chunk = chunk});
    CHECK(c.lines == std::vector<std::string>{"alpha", "bravo", "charlie"});
    auto f = collect(log, 0, LogReadLimits{.chunk = chunk, .final = true});
    CHECK(f.lines == std::vector<std::string>{"alpha", "bravo", "charlie", "delta"});
    CHECK(f.read.offset == 25);
  }
}

TEST_CASE("log lines: a line longer than the limit is skipped whole, never cut into a wrong one") {
  test::ScratchDir dir;
  const auto log = dir / "train.out";
  write(log, "short\n" + std::string(100, 'x') + "step 1\nafter\n" + std::string(50, 'y'));
  for (std::size_t chunk : {1u, 8u, 4096u}) {
    INFO(chunk);
    auto c = collect(log, 0, LogReadLimits{.max_line = 40, .chunk = chunk});
    CHECK(c.lines == std::vector<std::string>{"short", "after"});
    CHECK(c.read.long_lines == 1);
    CHECK(c.read.offset == 6 + 107 + 6);  // the unfinished long line is read again next time
    auto f = collect(log, 0, LogReadLimits{.max_line = 40, .chunk = chunk, .final = true});
    CHECK(f.read.long_lines == 2);
    CHECK(f.lines.size() == 2);
  }
}

TEST_CASE("log lines: a missing log is empty - a truncated one is read from its start") {
  test::ScratchDir dir;
  auto none = collect(dir / "missing.out", 0);
  CHECK(none.lines.empty());
  CHECK(none.read.size == 0);
  const auto log = dir / "train.out";
  write(log, "new\n");
  auto c = collect(log, 1000);
  CHECK(c.lines == std::vector<std::string>{"new"});
  CHECK_FALSE(read_lines(dir.path(), 0, [](std::string_view) {}).has_value());  // a directory
}

TEST_CASE("log lines: the tail starts at a whole line") {
  test::ScratchDir dir;
  const auto log = dir / "train.out";
  write(log, "aaaa\nbbbb\ncccc\n");
  CHECK(tail_start(log, 100).value() == 0);
  CHECK(tail_start(log, 5).value() == 10);  // "cccc\n" exactly: the byte before is a newline
  CHECK(tail_start(log, 7).value() == 10);  // "b\ncccc\n": the cut line is skipped
  CHECK(tail_start(log, 1).value() == 15);  // only the last newline: nothing whole
  CHECK(tail_start(dir / "missing", 5).value() == 0);
}
