#pragma once
// SHA-256 (FIPS 180-4), for keys that name content on disk (the compile cache's keys): a
// collision there would let one configuration's compiled graphs pass for another's.

#include <string>
#include <string_view>

namespace trnslurm {

// The digest of `data` as 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace trnslurm
