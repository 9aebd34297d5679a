#pragma once

#include <string_view>

namespace trnslurm {

// The value of `Key=` in one record of `scontrol show <entity> -o` (fields separated by spaces),
// up to the next space or newline: "" when the key is absent. A value with spaces (Reason=)
// gives its first word only.
std::string_view scontrol_field(std::string_view record, std::string_view key);

}  // namespace trnslurm
