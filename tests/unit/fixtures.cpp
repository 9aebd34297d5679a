#include "fixtures.hpp"

namespace trnslurm::test {

std::string fixtures_dir() {
  return TRNSLURM_FIXTURES;
}

}  // namespace trnslurm::test
