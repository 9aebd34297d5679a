#include "trnslurm/chain/chain_render.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trnslurm/chain/job_script.hpp"

namespace trnslurm {

Result<ChainSpec> render_chain(const ChainInputs& in) {
  std::vector<StageSpec> stages;
  for (const auto& s : in.stages) {
    if (!s.enabled) continue;
    if (s.nodes == 0) {
      return fail(fmt::format("stage {} asks for 0 nodes", s.name), s.command_origin.file,
                  fmt::format("set stages.{}.nodes to 1 or more", s.name));
    }
    auto args = s.resilience ? resilience_sbatch_args(*s.resilience) : std::vector<std::string>{};
    args.insert(args.end(), s.sbatch_args.begin(), s.sbatch_args.end());
    stages.push_back(StageSpec{s.name, {}, s.nodes, s.time, std::move(args)});
  }
  if (stages.empty()) {
    return fail("every stage is disabled", "recipe", "enable at least one [stages.*] table (enabled = true)");
  }
  auto selected = select_stages(std::move(stages), in.selection);
  if (!selected) return std::unexpected(selected.error());

  ChainSpec chain{in.chain_id, in.run_dir, in.slurm, std::move(*selected)};
  auto values = in.values;
  values["chain_id"] = in.chain_id;
  values["run_dir"] = in.run_dir.string();
  for (auto& stage : chain.stages) {
    const auto& src = *std::find_if(in.stages.begin(), in.stages.end(),
                                    [&](const StageInput& s) { return s.name == stage.name; });
    values["stage"] = stage.name;
    ScriptInput script{in.chain_id,
                       stage.name,
                       in.run_dir,
                       src.command,
                       src.command_origin,
                       src.env,
                       fmt::format("stages.{}.env", stage.name),
                       values,
                       in.exports,
                       src.resilience};
    auto text = render_job_script(script);
    if (!text) return std::unexpected(text.error());
    stage.script = std::move(*text);
  }
  return chain;
}

TextOrigin string_value_origin(std::string_view toml_text, std::string file, std::uint32_t line,
                               std::uint32_t column) {
  TextOrigin origin{std::move(file), line, column};
  if (line == 0 || column == 0) return origin;
  // Find the line.
  std::size_t start = 0;
  for (std::uint32_t l = 1; l < line; ++l) {
    const auto nl = toml_text.find('\n', start);
    if (nl == std::string_view::npos) return origin;
    start = nl + 1;
  }
  const auto end = toml_text.find('\n', start);
  const auto text =
      toml_text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  if (column - 1 > text.size()) return origin;
  const auto value = text.substr(column - 1);
  if (value.starts_with("\"\"\"") || value.starts_with("'''")) {
    // TOML trims a newline right after the opening delimiter.
    if (value.find_first_not_of(" \t\r", 3) == std::string_view::npos) {
      return TextOrigin{origin.file, line + 1, 1};
    }
    origin.column = column + 3;
  } else if (value.starts_with('"') || value.starts_with('\'')) {
    origin.column = column + 1;
  }
  return origin;
}

}  // namespace trnslurm
