# Warnings for our own targets only; TRNSLURM_WERROR turns them into errors. No
# -Wnull-dereference: GCC 12 reports it inside libstdc++ when CLI11 is inlined at -O2.
add_library(trnslurm_warnings INTERFACE)
target_compile_options(
  trnslurm_warnings
  INTERFACE -Wall
            -Wextra
            -Wpedantic
            -Wshadow
            -Wconversion
            -Wsign-conversion
            -Wnon-virtual-dtor
            -Wold-style-cast
            -Wcast-align
            -Woverloaded-virtual
            -Wimplicit-fallthrough
            -Wformat=2
            $<$<BOOL:${TRNSLURM_WERROR}>:-Werror>)

# Sanitizers apply to what runs in our own processes; the plugin runs inside slurmstepd,
# which is not built with them.
add_library(trnslurm_sanitizers INTERFACE)
if(TRNSLURM_SANITIZE)
  target_compile_options(trnslurm_sanitizers INTERFACE -fsanitize=${TRNSLURM_SANITIZE}
                                                       -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(trnslurm_sanitizers INTERFACE -fsanitize=${TRNSLURM_SANITIZE})
  # libstdc++'s own checks: an empty std::optional or an error std::expected dereferenced, or an
  # index past a container's end, aborts the test. This stands in for clang-tidy's
  # bugprone-unchecked-optional-access, which clang-tidy 16 cannot run reliably (.clang-tidy).
  target_compile_definitions(trnslurm_sanitizers INTERFACE _GLIBCXX_ASSERTIONS)
endif()
