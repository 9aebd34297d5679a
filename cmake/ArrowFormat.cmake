# Arrow's IPC metadata layout, generated from its own flatbuffer schemas
# (third_party/arrow-format) by Debian's flatc at build time, so that no field number is typed
# by hand. trnslurm::arrow_format: the generated headers, as <arrow_format/Message_generated.h>.
find_program(TRNSLURM_FLATC flatc)
if(NOT TRNSLURM_FLATC)
  trnslurm_missing("flatc, the flatbuffers compiler" flatbuffers-compiler)
endif()
set(_arrow_fbs_dir "${PROJECT_SOURCE_DIR}/third_party/arrow-format")
set(_arrow_gen_root "${CMAKE_BINARY_DIR}/generated")
set(_arrow_gen_dir "${_arrow_gen_root}/arrow_format")
set(_arrow_fbs)
set(_arrow_headers)
foreach(name Schema Tensor SparseTensor Message File)
  list(APPEND _arrow_fbs "${_arrow_fbs_dir}/${name}.fbs")
  list(APPEND _arrow_headers "${_arrow_gen_dir}/${name}_generated.h")
endforeach()
add_custom_command(
  OUTPUT ${_arrow_headers}
  COMMAND "${TRNSLURM_FLATC}" --cpp --scoped-enums --no-warnings -o "${_arrow_gen_dir}" ${_arrow_fbs}
  DEPENDS ${_arrow_fbs}
  COMMENT "Generating Arrow's IPC metadata headers with flatc"
  VERBATIM)
add_custom_target(trnslurm_arrow_format_headers DEPENDS ${_arrow_headers})
add_library(trnslurm_arrow_format INTERFACE)
add_library(trnslurm::arrow_format ALIAS trnslurm_arrow_format)
# SYSTEM: generated code is not held to the project's warnings.
target_include_directories(trnslurm_arrow_format SYSTEM INTERFACE "${_arrow_gen_root}")
target_link_libraries(trnslurm_arrow_format INTERFACE trnslurm::flatbuffers_headers)
add_dependencies(trnslurm_arrow_format trnslurm_arrow_format_headers)
