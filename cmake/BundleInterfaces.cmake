# Bundles interfaces/*.json, the upstream interface records (docs/upstream.md), into the core
# library (cmake/BundleTexts.cmake): recipe checks need them wherever trnslurm runs.
include(${CMAKE_CURRENT_LIST_DIR}/BundleTexts.cmake)

function(trnslurm_bundle_interfaces target interfaces_dir)
  trnslurm_bundle_texts(
    ${target}
    GLOB "${interfaces_dir}/*.json"
    EXTENSION json
    DELIMITER trnslurm_iface
    HEADER trnslurm/upstream/interface.hpp
    NAMESPACE trnslurm::upstream::detail
    TYPE BundledInterfaceText
    FUNCTION bundled_interface_texts
    OUTPUT bundled_interfaces_data.cpp)
endfunction()
