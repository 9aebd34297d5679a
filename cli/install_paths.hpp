#pragma once

#include <filesystem>

namespace trnslurm::cli {

// The CPU reference backend (the stand-ins of the upstream scripts, make_nxd_inputs.py):
// <prefix>/share/trnslurm/cpu beside an installed trnslurm, else the source tree this binary was built from.
// Recipes reach it as {{backend_dir}}.
std::filesystem::path backend_dir();

// This trnslurm binary (/proc/self/exe), for the steps that run it on the compute nodes.
std::filesystem::path self_exe();

}  // namespace trnslurm::cli
