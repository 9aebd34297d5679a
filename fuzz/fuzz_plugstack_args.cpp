// What the plugin reads from plugstack.conf: the trnslurm line's arguments (one per line of the
// input), a whole plugstack.conf text, slurm.conf lookups and the %n pattern of root=/state_dir=.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "trnslurm/node/plugstack_conf.hpp"
#include "trnslurm/node/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = trnslurm::fuzz::as_text(data, size);
  std::vector<std::string> args;
  for (auto line : trnslurm::fuzz::split(text, '\n')) args.emplace_back(line);
  if (auto site = trnslurm::parse_plugstack_args(args)) {
    (void)trnslurm::expand_node_pattern(site->root, "n1");
    (void)trnslurm::expand_node_pattern(site->state_dir, "trn-%n");
    (void)trnslurm::merge(*site, trnslurm::UserOptions{});
  }
  (void)trnslurm::scan_plugstack(text, "fuzz.conf");
  (void)trnslurm::slurm_conf_value(text, "PlugStackConfig");
  (void)trnslurm::expand_node_pattern(text, "n1");
  return 0;
}
