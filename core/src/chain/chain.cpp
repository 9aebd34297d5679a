#include "trnslurm/chain/chain.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <ranges>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm {
namespace {

// Slurm expands %j, %x... in --output; a literal % in the run directory must be doubled.
std::string escape_percent(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%') out += '%';
    out += c;
  }
  return out;
}

std::optional<std::size_t> stage_index(const std::vector<StageSpec>& stages, std::string_view name) {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].name == name) return i;
  }
  return std::nullopt;
}

std::string known_stages(const std::vector<StageSpec>& stages) {
  return fmt::format("{}", fmt::join(stages | std::views::transform(&StageSpec::name), ", "));
}

}  // namespace

std::string make_chain_id(std::chrono::system_clock::time_point now, std::uint32_t random) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y%m%d-%H%M%S}-{:03}-{:08x}", tm, ms, random);
}

bool is_chain_id(std::string_view id) {
  return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
}

std::string job_name(std::string_view chain_id, std::string_view stage) {
  return fmt::format("trn-{}-{}", chain_id, stage);
}

std::string job_comment(std::string_view chain_id, std::string_view stage) {
  return fmt::format("trnslurm:{}:{}", chain_id, stage);
}

std::filesystem::path script_path(const ChainSpec& chain, std::size_t stage) {
  return chain.run_dir / fmt::format("{}.sh", chain.stages.at(stage).name);
}

std::filesystem::path output_pattern(const std::filesystem::path& run_dir, std::string_view stage) {
  return std::filesystem::path(escape_percent((run_dir / "logs").string())) / fmt::format("{}-%j.out", stage);
}

std::filesystem::path output_path(const std::filesystem::path& run_dir, std::string_view stage, JobId id) {
  return run_dir / "logs" / fmt::format("{}-{}.out", stage, id);
}

std::vector<std::string> sbatch_argv(const ChainSpec& chain, std::size_t stage, std::optional<JobId> after) {
  const auto& s = chain.stages.at(stage);
  std::vector<std::string> argv{
      "sbatch",
      "--parsable",
      "--job-name=" + job_name(chain.chain_id, s.name),
      "--comment=" + job_comment(chain.chain_id, s.name),
      fmt::format("--nodes={}", s.nodes),
      "--output=" + output_pattern(chain.run_dir, s.name).string(),
  };
  // A dependent of a failed stage is cancelled rather than pending forever, whatever the
  // cluster's DependencyParameters say. sbatch keeps both flags when given =yes and =no, and
  // yes wins: a user's own --kill-on-invalid-dep must replace ours, not follow it.
  const auto user_sets = [](const std::vector<std::string>& args) {
    return std::any_of(args.begin(), args.end(),
                       [](const std::string& a) { return a.starts_with("--kill-on-invalid-dep"); });
  };
  if (!user_sets(chain.slurm.sbatch_args) && !user_sets(s.sbatch_args))
    argv.emplace_back("--kill-on-invalid-dep=yes");
  std::vector<std::string> deps;
  if (after) deps.push_back(fmt::format("afterok:{}", *after));
  deps.insert(deps.end(), s.also_after.begin(), s.also_after.end());
  if (!deps.empty()) argv.push_back(fmt::format("--dependency={}", fmt::join(deps, ",")));
  if (!s.time.empty()) argv.push_back("--time=" + s.time);
  if (!chain.slurm.partition.empty()) argv.push_back("--partition=" + chain.slurm.partition);
  if (!chain.slurm.account.empty()) argv.push_back("--account=" + chain.slurm.account);
  if (!chain.slurm.qos.empty()) argv.push_back("--qos=" + chain.slurm.qos);
  if (chain.slurm.exclusive) argv.emplace_back("--exclusive");
  argv.insert(argv.end(), chain.slurm.sbatch_args.begin(), chain.slurm.sbatch_args.end());
  argv.insert(argv.end(), s.sbatch_args.begin(), s.sbatch_args.end());
  argv.push_back(script_path(chain, stage).string());
  return argv;
}

Result<std::vector<StageSpec>> select_stages(std::vector<StageSpec> stages, const StageSelection& sel) {
  if (!sel.only.empty() && (!sel.from.empty() || !sel.until.empty())) {
    return fail("--only cannot be combined with --from or --until", "command line",
                "use --only S alone, or --from/--until");
  }
  std::size_t first = 0;
  std::size_t last = stages.size();  // one past
  const auto find = [&](const std::string& name, const char* option) -> Result<std::size_t> {
    if (auto i = stage_index(stages, name)) return *i;
    return fail(fmt::format("{} names the stage '{}', which is not an enabled stage", option, name),
                "command line", fmt::format("enabled stages: {}", known_stages(stages)));
  };
  if (!sel.only.empty()) {
    auto i = find(sel.only, "--only");
    if (!i) return std::unexpected(i.error());
    first = *i;
    last = *i + 1;
  }
  if (!sel.from.empty()) {
    auto i = find(sel.from, "--from");
    if (!i) return std::unexpected(i.error());
    first = *i;
  }
  if (!sel.until.empty()) {
    auto i = find(sel.until, "--until");
    if (!i) return std::unexpected(i.error());
    last = *i + 1;
  }
  if (first >= last) {
    return fail("no stage selected: --from comes after --until", "command line",
                fmt::format("stages run in the order {}", known_stages(stages)));
  }
  std::vector<StageSpec> out(std::make_move_iterator(stages.begin() + static_cast<std::ptrdiff_t>(first)),
                             std::make_move_iterator(stages.begin() + static_cast<std::ptrdiff_t>(last)));
  return out;
}

Result<JobId> parse_job_id(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  const auto semi = text.find(';');
  const auto digits = text.substr(0, semi);
  const auto id = parse_number<JobId>(digits);
  if (!id || *id == 0) {
    return fail(fmt::format("sbatch printed '{}' where a job id was expected", text), "sbatch --parsable");
  }
  return *id;
}

}  // namespace trnslurm
