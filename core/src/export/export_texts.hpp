#pragma once
// The shell files of core/src/export/scripts/, compiled in by core/CMakeLists.txt
// (cmake/BundleTexts.cmake): named by file name without ".sh". Internal to the core.

#include <span>
#include <string_view>

namespace trnslurm::detail {

struct ExportText {
  std::string_view name;
  std::string_view text;
};
// Defined in the generated export_texts_data.cpp.
std::span<const ExportText> export_texts();

}  // namespace trnslurm::detail
