# Installation and packaging: `cmake --install` puts trnslurm in bin, the plugin in Slurm's own
# plugin directory, a plugstack.conf.d snippet in Slurm's configuration directory, and the
# recipes, the CPU backend, the dev cluster script, man pages and bash completion under share/.
# `cpack -G DEB` turns the same tree into a .deb whose dependencies are Debian's runtime packages.

# Slurm's plugin directory, found beside the Slurm we build against: Debian puts it in
# <libdir>/slurm-wlm, upstream builds (ParallelCluster's /opt/slurm) in <libdir>/slurm.
get_filename_component(_slurm_libdir "${SLURM_LIBRARY}" DIRECTORY)
find_path(
  _slurm_plugin_dir
  NAMES select_cons_tres.so proctrack_linuxproc.so
  PATHS "${_slurm_libdir}/slurm-wlm" "${_slurm_libdir}/slurm"
  NO_DEFAULT_PATH)
if(NOT _slurm_plugin_dir)
  set(_slurm_plugin_dir "${_slurm_libdir}/slurm")
endif()
set(TRNSLURM_PLUGIN_DIR
    "${_slurm_plugin_dir}"
    CACHE PATH "Where the SPANK plugin is installed (Slurm's plugin directory)")
# Debian's Slurm reads /etc/slurm; ParallelCluster's /opt/slurm/etc.
set(TRNSLURM_SLURM_CONFDIR
    "/etc/slurm"
    CACHE PATH "Slurm's configuration directory (the plugstack.conf.d snippet goes below it)")
set(TRNSLURM_SHARE_DIR "${CMAKE_INSTALL_DATADIR}/trnslurm")

if(TARGET trnslurm_spank)
  install(TARGETS trnslurm_spank LIBRARY DESTINATION "${TRNSLURM_PLUGIN_DIR}" COMPONENT plugin)
  set(TRNSLURM_INSTALLED_PLUGIN "${TRNSLURM_PLUGIN_DIR}/trnslurm.so")
  configure_file("${PROJECT_SOURCE_DIR}/spank/plugstack.conf.in" "${CMAKE_BINARY_DIR}/trnslurm.conf" @ONLY)
  install(FILES "${CMAKE_BINARY_DIR}/trnslurm.conf" DESTINATION "${TRNSLURM_SLURM_CONFDIR}/plugstack.conf.d"
          COMPONENT plugin)
endif()

install(DIRECTORY "${PROJECT_SOURCE_DIR}/recipes/" DESTINATION "${TRNSLURM_SHARE_DIR}/recipes" FILES_MATCHING
        PATTERN "*.toml")
install(
  DIRECTORY "${PROJECT_SOURCE_DIR}/scripts/cpu/"
  DESTINATION "${TRNSLURM_SHARE_DIR}/cpu"
  FILES_MATCHING
  PATTERN "*.py"
  PATTERN "*.md"
  PATTERN "__pycache__" EXCLUDE)
# The stand-in venv's tools have no .py suffix, and must stay executable.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/scripts/cpu/neuron-venv/bin/" DESTINATION "${TRNSLURM_SHARE_DIR}/cpu/neuron-venv/bin"
        USE_SOURCE_PERMISSIONS)
# The nccom-test stand-in (no suffix, as the tool it stands in for).
install(PROGRAMS "${PROJECT_SOURCE_DIR}/scripts/cpu/nccom-test" DESTINATION "${TRNSLURM_SHARE_DIR}/cpu")
install(PROGRAMS "${PROJECT_SOURCE_DIR}/scripts/dev-cluster" DESTINATION "${TRNSLURM_SHARE_DIR}/scripts")

file(GLOB _man1 CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/man/*.1")
file(GLOB _man5 CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/man/*.5")
file(GLOB _man8 CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/man/*.8")
install(FILES ${_man1} DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
install(FILES ${_man5} DESTINATION "${CMAKE_INSTALL_MANDIR}/man5")
install(FILES ${_man8} DESTINATION "${CMAKE_INSTALL_MANDIR}/man8")
if(EXISTS "${PROJECT_SOURCE_DIR}/scripts/completion.bash")
  install(
    FILES "${PROJECT_SOURCE_DIR}/scripts/completion.bash"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions"
    RENAME trnslurm)
endif()

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "trnslurm")
set(CPACK_PACKAGE_CONTACT "trnslurm maintainers <trnslurm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
# dpkg-shlibdeps derives the runtime dependencies (libc6, libslurm38: the C++ runtime, fmt and
# toml++ are linked in) from the binaries; the plugin additionally needs the Slurm it was built
# against.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS 
    "slurm-client (>= ${TRNSLURM_SLURM_SERIES}), slurm-client (<< ${TRNSLURM_SLURM_VERSION_NEXT})")
# python3-matplotlib: `trnslurm report` draws with it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "slurmd, python3-torch, python3-numpy, python3-matplotlib, libfabric1")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${PROJECT_SOURCE_DIR}/packaging/conffiles")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
include(CPack)
