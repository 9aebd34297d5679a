// Benchmark: counting a Hugging Face save_to_disk dataset of many shards, side by side with
// stat(2) of the same files in the same process and run.
//
//   bench_dataset_count generate DIR SHARDS ROWS SEQ_LEN BATCHES
//       writes DIR/state.json and SHARDS Arrow stream shards of BATCHES record batches of ROWS rows
//       of SEQ_LEN tokens (one List<Int32> column). The bodies are left as holes (a sparse file):
//       every byte of metadata is where a writer puts it, the tokens are never written, so shards
//       of gigabytes cost no disk. A reader that read bodies would still pay for their size.
//   bench_dataset_count once stat|count DIR READERS
//       one stat(2) of every shard by READERS threads, or one count_dataset(DIR) with READERS,
//       without a warm-up (a cold file system: bench/slow_fs.c), and prints its milliseconds.
//   bench_dataset_count count DIR [REPEATS] [READERS]
//       times stat(2) of every shard listed in state.json against count_dataset(DIR), alternating,
//       and prints medians, their ratio and this process's peak RSS. With READERS (the
//       DatasetRequest's readers; default its own), stat(2) is made by as many threads at once,
//       so that on a slow file system both sides wait their round trips READERS at a time.
//   bench_dataset_count state-json DIR SHARDS REPEATS
//       writes DIR/state.json listing SHARDS shards and none of the shards, and times count_dataset(DIR)
//       to its first error (the first shard is missing: the whole list was read and checked) against
//       nlohmann::json::parse of the same text, and against the callback parse it replaced (once).
// bench/dataset-count drives both for two shard sizes and prints the table; bench/state-json drives
// state-json.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/arrow_craft.hpp"
#include "trnslurm/dataset/dataset.hpp"

namespace fs = std::filesystem;
namespace craft = trnslurm::test::craft;

namespace {

std::uint64_t arg(const char* s) {
  return std::strtoull(s, nullptr, 10);
}

int generate(const fs::path& dir, std::uint64_t shards, std::int64_t rows, std::int64_t seq_len,
             int batches) {
  fs::create_directories(dir);
  const auto schema = craft::schema_message();
  const auto batch = craft::list_batch_message(rows, seq_len);
  const auto body = static_cast<std::size_t>(craft::list_body_length(rows, seq_len));
  const auto eos = craft::end_of_stream();
  nlohmann::json files = nlohmann::json::array();
  for (std::uint64_t i = 0; i < shards; ++i) {
    const auto name = fmt::format("data-{:05}-of-{:05}.arrow", i, shards);
    const int fd = ::open((dir / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::perror("open");
      return 1;
    }
    off_t at = 0;
    const auto put = [&](const craft::Bytes& b) {
      if (::pwrite(fd, b.data(), b.size(), at) != static_cast<ssize_t>(b.size())) std::perror("pwrite");
      at += static_cast<off_t>(b.size());
    };
    put(schema);
    for (int k = 0; k < batches; ++k) {
      put(batch);
      at += static_cast<off_t>(body);  // the body: a hole
    }
    put(eos);
    ::close(fd);
    files.push_back({{"filename", name}});
  }
  std::ofstream(dir / "state.json") << nlohmann::json{{"_data_files", files}, {"_split", "train"}}.dump();
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<std::string> shard_paths(const fs::path& dir) {
  std::vector<std::string> paths;
  std::ifstream in(dir / "state.json");
  const auto state = nlohmann::json::parse(in);
  for (const auto& f : state["_data_files"])
    paths.push_back((dir / f["filename"].get<std::string>()).string());
  return paths;
}

// stat(2) of every path by `readers` threads at once; the sum of the sizes.
std::uint64_t stat_all(const std::vector<std::string>& paths, unsigned readers) {
  std::atomic<std::uint64_t> total = 0;
  std::atomic<std::size_t> next = 0;
  const auto work = [&] {
    struct stat st {};
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      if (::stat(paths[i].c_str(), &st) == 0) total += static_cast<std::uint64_t>(st.st_size);
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < readers; ++t) helpers.emplace_back(work);
    work();
  }
  return total.load();
}

int once(const std::string& what, const fs::path& dir, unsigned readers) {
  const auto paths = shard_paths(dir);  // state.json read before the clock starts, by both
  const auto t0 = std::chrono::steady_clock::now();
  if (what == "stat") {
    stat_all(paths, readers);
  } else if (auto c = trnslurm::count_dataset({.path = dir, .readers = readers}); !c) {
    fmt::print(stderr, "count failed: {}\n", trnslurm::to_string(c.error()));
    return 1;
  }
  fmt::print("{:.1f}\n",
             std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

int count(const fs::path& dir, int repeats, std::optional<unsigned> readers) {
  const auto paths = shard_paths(dir);
  std::uint64_t apparent = 0;
  trnslurm::DatasetRequest request{.path = dir};
  if (readers) request.readers = *readers;
  const auto stat_threads = readers.value_or(1);
  std::vector<double> stat_ms, count_ms;
  std::uint64_t rows = 0;
  // One warm-up of each (page cache, dentries), then alternate so drift hits both alike.
  apparent = stat_all(paths, stat_threads);
  if (auto c = trnslurm::count_dataset(request); !c) {
    fmt::print(stderr, "count failed: {}\n", trnslurm::to_string(c.error()));
    return 1;
  }
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    apparent = stat_all(paths, stat_threads);
    auto t1 = std::chrono::steady_clock::now();
    const auto c = trnslurm::count_dataset(request);
    auto t2 = std::chrono::steady_clock::now();
    if (!c) return 1;
    rows = c->rows;
    stat_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    count_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  const double s = median(stat_ms), k = median(count_ms);
  fmt::print(
      "shards={} readers={} apparent_size={:.1f}GiB rows={} stat_ms={:.1f} count_ms={:.1f} ratio={:.2f} "
      "count_us_per_shard={:.2f} peak_rss_mib={:.1f}\n",
      paths.size(), request.readers, static_cast<double>(apparent) / (1024.0 * 1024 * 1024), rows, s, k,
      k / s, 1000.0 * k / static_cast<double>(paths.size()), static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int state_json(const fs::path& dir, std::uint64_t shards, int repeats) {
  fs::create_directories(dir);
  std::string text = "{\"_data_files\": [";
  for (std::uint64_t i = 0; i < shards; ++i)
    text += fmt::format("{}{{\"filename\": \"data-{:06}-of-{:06}.arrow\"}}", i == 0 ? "" : ", ", i, shards);
  text += "], \"_split\": \"train\"}";
  std::ofstream(dir / "state.json", std::ios::binary) << text;
  const auto first_shard = fmt::format("data-{:06}-of-{:06}.arrow", 0, shards);
  const auto read = [&] {
    const auto c = trnslurm::count_dataset({.path = dir});
    if (!c && c.error().where.find(first_shard) != std::string::npos) return true;
    fmt::print(stderr, "state-json: expected the first shard missing, got {}\n",
               c ? std::string("a count") : trnslurm::to_string(c.error()));
    return false;
  };
  std::vector<double> parse_ms, read_ms;
  std::size_t values = 0;
  if (!read()) return 1;  // warm-up of both
  values = nlohmann::json::parse(text)["_data_files"].size();
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    values = nlohmann::json::parse(text)["_data_files"].size();
    parse_ms.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    if (!read()) return 1;
    read_ms.push_back(ms_since(t0));
  }
  // The reader before issue 31 counted values in a parser callback; any callback makes nlohmann
  // look through the enclosing array after each object, the square of the shard count.
  const auto t0 = std::chrono::steady_clock::now();
  const auto before =
      nlohmann::json::parse(text, [](int, nlohmann::json::parse_event_t, nlohmann::json&) { return true; });
  const double before_ms = ms_since(t0);
  if (before["_data_files"].size() != values) return 1;
  const double p = median(parse_ms), k = median(read_ms);
  fmt::print(
      "state.json: shards={} bytes={} parse_ms={:.1f} read_ms={:.1f} ratio={:.2f} before_ms={:.1f} "
      "before_ratio={:.2f}\n",
      values, text.size(), p, k, k / p, before_ms, before_ms / p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "generate" && argc == 7) {
    return generate(argv[2], arg(argv[3]), static_cast<std::int64_t>(arg(argv[4])),
                    static_cast<std::int64_t>(arg(argv[5])), static_cast<int>(arg(argv[6])));
  }
  if (mode == "once" && argc == 5 && (std::string(argv[2]) == "stat" || std::string(argv[2]) == "count"))
    return once(argv[2], argv[3], static_cast<unsigned>(arg(argv[4])));
  if (mode == "count" && argc >= 3 && argc <= 5) {
    return count(argv[2], argc >= 4 ? static_cast<int>(arg(argv[3])) : 5,
                 argc == 5 ? std::optional<unsigned>(static_cast<unsigned>(arg(argv[4]))) : std::nullopt);
  }
  if (mode == "state-json" && argc == 5)
    return state_json(argv[2], arg(argv[3]), static_cast<int>(arg(argv[4])));
  std::fprintf(stderr,
               "usage: bench_dataset_count generate DIR SHARDS ROWS SEQ_LEN BATCHES\n"
               "       bench_dataset_count state-json DIR SHARDS REPEATS\n"
               "       bench_dataset_count once stat|count DIR READERS\n"
               "       bench_dataset_count count DIR [REPEATS] [READERS]\n");
  return 2;
}
