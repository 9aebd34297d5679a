#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "trnslurm/util/elf_symbol.hpp"

using namespace trnslurm;

// The success path is exercised on the real plugin by tests/integration/test_plugin_env.sh
// (`trnslurm doctor` reads its plugin_version); here, the refusals.
TEST_CASE("elf_symbol: refuses what is not an ELF file or lacks the symbol") {
  const auto not_elf =
      read_u32_symbol(trnslurm::test::fixtures_dir() + "/neuron/trn1/sys/devices/virtual/dmi/id/product_name",
                      "plugin_version");
  REQUIRE_FALSE(not_elf);
  CHECK(not_elf.error().what.find("not a 64-bit") != std::string::npos);
  const auto missing = read_u32_symbol("/does/not/exist.so", "plugin_version");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what == "cannot read the plugin: No such file or directory");
  const auto no_symbol = read_u32_symbol("/lib/x86_64-linux-gnu/libc.so.6", "plugin_version");
  REQUIRE_FALSE(no_symbol);
  CHECK(no_symbol.error().what == "no exported symbol plugin_version");
}
