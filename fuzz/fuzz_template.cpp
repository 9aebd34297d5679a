// The script renderer: "command\0env value\0placeholder value..." rendered both ways and as a
// whole job script. Rendering succeeds or refuses; it never crashes. When it succeeds under
// Substitution::variables, no value text appears in the command outside the quoted exports: the
// rendered command is the same whatever the values (each placeholder is a reference to an
// exported variable), and the job script ends with it, after the exports.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.hpp"
#include "trnslurm/chain/job_script.hpp"
#include "trnslurm/util/template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = trnslurm::fuzz::split(trnslurm::fuzz::as_text(data, size), '\0');
  trnslurm::TemplateValues values{{"run_dir", "/runs/x"}, {"model.name", "m"}, {"value", "v"}};
  if (parts.size() > 2) values["value"] = std::string(parts[2]);
  if (parts.size() > 3) values["model.name"] = std::string(parts[3]);
  const trnslurm::TextOrigin origin{"fuzz.toml", 1, 1};
  const auto body = trnslurm::render_template(parts[0], values, origin, trnslurm::Substitution::variables);
  // Other values, accepted wherever any is (quotable, a whole number for arithmetic): a command
  // that renders with the first renders with these, to the same text.
  trnslurm::TemplateValues other = values;
  for (auto& [name, value] : other) value = "7";
  const auto same = trnslurm::render_template(parts[0], other, origin, trnslurm::Substitution::variables);
  if (body && (!same || *same != *body)) std::abort();
  (void)trnslurm::render_template(parts[0], values, origin, trnslurm::Substitution::raw);
  if (auto q = trnslurm::shell_quote(parts.size() > 1 ? parts[1] : parts[0])) {
    if (q->size() < 2 || q->front() != '\'' || q->back() != '\'') std::abort();
  }
  trnslurm::ScriptInput in;
  in.chain_id = "c1";
  in.stage = "train";
  in.run_dir = "/runs/x";
  in.command = std::string(parts[0]);
  if (parts.size() > 1) in.env["EXTRA"] = std::string(parts[1]);
  in.env_where = "stages.train.env";
  in.values = values;
  in.exports = trnslurm::exports_for(values);
  if (const auto script = trnslurm::render_job_script(in); script && body) {
    const std::string tail = body->ends_with('\n') ? *body : *body + '\n';
    if (!script->ends_with(tail)) std::abort();
  }
  return 0;
}
