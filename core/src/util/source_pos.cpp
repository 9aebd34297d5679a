#include "trnslurm/util/source_pos.hpp"

#include <fmt/format.h>

namespace trnslurm {

std::string to_string(const SourcePos& pos) {
  if (pos.line == 0) return pos.file;
  return fmt::format("{}:{}:{}", pos.file, pos.line, pos.column);
}

}  // namespace trnslurm
