#pragma once
// The Python files of cli/scripts/, compiled into trnslurm by cli/CMakeLists.txt
// (cmake/BundleTexts.cmake): named by file name without ".py".

#include <span>
#include <string_view>

namespace trnslurm::cli::detail {

struct ScriptText {
  std::string_view name;
  std::string_view text;
};
// Defined in the generated report_texts_data.cpp.
std::span<const ScriptText> report_texts();

}  // namespace trnslurm::cli::detail
