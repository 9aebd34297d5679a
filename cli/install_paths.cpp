#include "install_paths.hpp"

#include <system_error>

namespace trnslurm::cli {

namespace fs = std::filesystem;

fs::path self_exe() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("trnslurm") : exe;
}

fs::path backend_dir() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = exe.parent_path().parent_path() / "share" / "trnslurm" / "cpu";
    if (fs::exists(installed / "make_nxd_inputs.py", ec)) return installed;
  }
  return fs::path(TRNSLURM_SOURCE_DIR) / "scripts" / "cpu";
}

}  // namespace trnslurm::cli
