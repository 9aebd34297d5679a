#pragma once
// The shell files of core/src/chain/scripts/, compiled in by core/CMakeLists.txt
// (cmake/BundleTexts.cmake): named by file name without ".sh". Internal to the core.

#include <span>
#include <string_view>

namespace trnslurm::detail {

struct ScriptText {
  std::string_view name;
  std::string_view text;
};
// Defined in the generated job_script_texts_data.cpp.
std::span<const ScriptText> job_script_texts();
// The Python files (named without ".py"), in job_script_python_texts_data.cpp.
std::span<const ScriptText> job_script_python_texts();

}  // namespace trnslurm::detail
