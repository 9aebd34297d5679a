# cmake -DFILE=<shared object or executable> -DREADELF=<readelf> -DREFUSED=libfmt,libstdc++ -P CheckNeeded.cmake
# Fails the build when FILE needs one of REFUSED's shared libraries. The plugin and trnslurm carry
# fmt's compiled part (spank/fmt_impl.cpp) and the C++ runtime: should that list of fmt's
# instantiations lack one a newer fmt adds, --as-needed would quietly resolve it from libfmt.so
# (and libstdc++.so behind it) instead of failing; this makes it fail (docs/plugin.md, "Hardening
# and cost").
execute_process(COMMAND "${READELF}" -d "${FILE}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${READELF} -d ${FILE} failed (${rc})")
endif()
string(REPLACE "," ";" REFUSED "${REFUSED}")
foreach(lib IN LISTS REFUSED)
  string(FIND "${dynamic}" "Shared library: [${lib}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${FILE} needs ${lib}*.so: a symbol of it is not in spank/fmt_impl.cpp or the static "
                        "C++ runtime (readelf -d ${FILE}; docs/plugin.md, \"Hardening and cost\")")
  endif()
endforeach()
