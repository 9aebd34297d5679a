# Bundles recipes/*.toml into the core library (cmake/BundleTexts.cmake), so `trnslurm recipes`
# and `trnslurm init` work from any directory and once installed.
include(${CMAKE_CURRENT_LIST_DIR}/BundleTexts.cmake)

function(trnslurm_bundle_recipes target recipes_dir)
  trnslurm_bundle_texts(
    ${target}
    GLOB "${recipes_dir}/*.toml"
    EXTENSION toml
    DELIMITER trnslurm_recipe
    HEADER trnslurm/recipe/bundled_recipes.hpp
    NAMESPACE trnslurm::detail
    TYPE BundledRecipeText
    FUNCTION bundled_recipe_texts
    OUTPUT bundled_recipes_data.cpp)
endfunction()
