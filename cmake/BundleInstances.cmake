# Bundles instances/instances.toml, the instance types and the sources of their figures
# (docs/instances.md), into the core library (cmake/BundleTexts.cmake): plan, the plugin and
# `trnslurm instances` read it wherever trnslurm runs, with no data file installed.
include(${CMAKE_CURRENT_LIST_DIR}/BundleTexts.cmake)

function(trnslurm_bundle_instances target instances_dir)
  trnslurm_bundle_texts(
    ${target}
    GLOB "${instances_dir}/*.toml"
    EXTENSION toml
    DELIMITER trnslurm_inst
    HEADER trnslurm/instance/instance.hpp
    NAMESPACE trnslurm::detail
    TYPE BundledInstanceText
    FUNCTION bundled_instance_texts
    OUTPUT bundled_instances_data.cpp)
endfunction()
