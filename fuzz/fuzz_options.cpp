// srun/#SBATCH option values (what a user types, or smuggles in SLURM_SPANK_* variables): the
// input is "name\0value\0name\0value..."; each pair goes through apply_option as the plugin's
// callback does, then the options are merged with the site defaults.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "fuzz_util.hpp"
#include "trnslurm/node/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = trnslurm::fuzz::split(trnslurm::fuzz::as_text(data, size), '\0');
  trnslurm::UserOptions opts;
  for (std::size_t i = 0; i < parts.size(); i += 2) {
    std::optional<std::string_view> value;
    if (i + 1 < parts.size()) value = parts[i + 1];
    (void)trnslurm::apply_option(opts, parts[i], value, 46820);
  }
  const auto value = parts.size() > 1 ? parts[1] : parts[0];
  (void)trnslurm::parse_env_switch(value);
  (void)trnslurm::parse_cores(value);
  (void)trnslurm::parse_efa(value);
  (void)trnslurm::parse_cache(value);
  (void)trnslurm::parse_root_comm(value, 46820);
  (void)trnslurm::merge(trnslurm::SiteSettings{}, opts);
  return 0;
}
