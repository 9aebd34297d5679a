# Every dependency comes from a Debian package; a missing one stops configuration with the
# package to install. scripts/install-deps installs them all.
find_package(PkgConfig REQUIRED)

function(trnslurm_missing what package)
  message(
    FATAL_ERROR
      "trnslurm: ${what} not found. Install the Debian package '${package}' "
      "(apt-get install ${package}), or run scripts/install-deps for all of them.")
endfunction()

find_path(SLURM_INCLUDE_DIR slurm/spank.h)
find_library(SLURM_LIBRARY slurm)
if(NOT SLURM_INCLUDE_DIR OR NOT SLURM_LIBRARY)
  trnslurm_missing("Slurm headers and libslurm (slurm/spank.h, libslurm.so)" libslurm-dev)
endif()
file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _slurm_version_line
     REGEX "^#define SLURM_VERSION_NUMBER")
string(REGEX MATCH "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])" _
             "${_slurm_version_line}")
math(EXPR _major "0x${CMAKE_MATCH_1}")
math(EXPR _minor "0x${CMAKE_MATCH_2}")
math(EXPR _micro "0x${CMAKE_MATCH_3}")
# Slurm writes the minor version with two digits: 22.05.8.
if(_minor LESS 10)
  set(_minor "0${_minor}")
endif()
set(TRNSLURM_SLURM_VERSION "${_major}.${_minor}.${_micro}")
set(TRNSLURM_SLURM_SERIES "${_major}.${_minor}")
# A SPANK plugin loads only into the major.minor it was built against: packages depend on
# >= this version and << the next minor.
math(EXPR _next_minor "${_minor} + 1")
if(_next_minor LESS 10)
  set(_next_minor "0${_next_minor}")
endif()
set(TRNSLURM_SLURM_VERSION_NEXT "${_major}.${_next_minor}")
message(STATUS "trnslurm: building against Slurm ${TRNSLURM_SLURM_VERSION}")
add_library(trnslurm::slurm INTERFACE IMPORTED)
target_include_directories(trnslurm::slurm INTERFACE "${SLURM_INCLUDE_DIR}")
target_link_libraries(trnslurm::slurm INTERFACE "${SLURM_LIBRARY}")

# Headers only: the plugin dlopen()s libfabric when it needs it (loading it costs every srun).
find_path(FABRIC_INCLUDE_DIR rdma/fabric.h)
if(NOT FABRIC_INCLUDE_DIR)
  trnslurm_missing("libfabric headers (rdma/fabric.h)" libfabric-dev)
endif()
add_library(trnslurm::fabric_headers INTERFACE IMPORTED)
target_include_directories(trnslurm::fabric_headers INTERFACE "${FABRIC_INCLUDE_DIR}")

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  trnslurm_missing("fmt" libfmt-dev)
endif()

pkg_check_modules(TOMLPP QUIET IMPORTED_TARGET tomlplusplus)
if(NOT TOMLPP_FOUND)
  trnslurm_missing("toml++" libtomlplusplus-dev)
endif()

# Boost.Process, the one process runner's launcher (core/src/util/process.cpp): its headers only.
# Its search_path, the one part that needs the compiled Boost.Filesystem, is not used, so
# neither trnslurm nor the plugin links a Boost library (docs/plugin.md, "Cost").
find_package(Boost 1.74 QUIET)
if(NOT Boost_FOUND)
  trnslurm_missing("Boost 1.74 (Boost.Process)" libboost1.74-dev)
endif()

find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  trnslurm_missing("CLI11" libcli11-dev)
endif()

find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  trnslurm_missing("nlohmann-json" nlohmann-json3-dev)
endif()

# Headers only: the dataset reader checks Arrow's metadata with flatbuffers' generic Table and
# Verifier; the field ids come from Arrow's schemas through flatc (cmake/ArrowFormat.cmake).
find_path(FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h)
if(NOT FLATBUFFERS_INCLUDE_DIR)
  trnslurm_missing("flatbuffers headers (flatbuffers/flatbuffers.h)" libflatbuffers-dev)
endif()
add_library(trnslurm::flatbuffers_headers INTERFACE IMPORTED)
target_include_directories(trnslurm::flatbuffers_headers INTERFACE "${FLATBUFFERS_INCLUDE_DIR}")

if(TRNSLURM_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  if(NOT Catch2_FOUND)
    trnslurm_missing("Catch2 2.x" catch2)
  endif()
  include(Catch)
endif()
