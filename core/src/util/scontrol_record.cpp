#include "trnslurm/util/scontrol_record.hpp"

namespace trnslurm {

std::string_view scontrol_field(std::string_view record, std::string_view key) {
  // A key counts at the record's start or after a space: "Name=" must not match "NodeName=".
  for (std::size_t at = record.find(key); at != std::string_view::npos; at = record.find(key, at + 1)) {
    if (at != 0 && record[at - 1] != ' ') continue;
    if (at + key.size() >= record.size() || record[at + key.size()] != '=') continue;
    const auto rest = record.substr(at + key.size() + 1);
    return rest.substr(0, rest.find_first_of(" \n"));
  }
  return {};
}

}  // namespace trnslurm
