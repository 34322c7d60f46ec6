# `cmake --install BUILD --prefix P` (docs/EMBEDDING.md): the tpbsim tool,
# the model's static libraries and headers, and a CMake package so that
# another project's find_package(tpbsim) gives it tpbsim::tpbsim.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TPBSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tpbsim)
install(TARGETS tpbsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The plot of `tpbsim sweep` (platform/sweep/collect.cpp finds it beside bin/).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/platform/sweep/plot_sweep.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tpbsim)
install(TARGETS ${TPBSIM_RUN_LIBS} tpbsim_lib
        EXPORT tpbsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpbsim)
# Headers keep the repository's paths ("platform/core/tpb_core.h").
foreach(_dir models firmware_stubs platform/core platform/run platform/cosim platform/io)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpbsim/${_dir}
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT tpbsimTargets NAMESPACE tpbsim:: DESTINATION ${TPBSIM_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tpbsimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tpbsimConfig.cmake
                              INSTALL_DESTINATION ${TPBSIM_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tpbsimConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tpbsimConfig.cmake ${PROJECT_BINARY_DIR}/tpbsimConfigVersion.cmake
        DESTINATION ${TPBSIM_INSTALL_CMAKEDIR})
