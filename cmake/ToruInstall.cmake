# Installed package: headers, libraries, toruConfig.cmake (+ version) and toru.pc.
set(TORU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/toru)
install(FILES ${PROJECT_BINARY_DIR}/generated/toru/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/toru)
install(EXPORT toruTargets NAMESPACE toru:: DESTINATION ${TORU_CMAKE_DIR})
configure_package_config_file(cmake/toruConfig.cmake.in ${PROJECT_BINARY_DIR}/toruConfig.cmake
  INSTALL_DESTINATION ${TORU_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/toruConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/toruConfig.cmake ${PROJECT_BINARY_DIR}/toruConfigVersion.cmake
  cmake/FindFFTW.cmake cmake/FindHWLOC.cmake cmake/FindNCCL.cmake DESTINATION ${TORU_CMAKE_DIR})

set(TORU_PC_LIBS "")
foreach(module IN LISTS TORU_MODULES)
  if(TARGET toru_${module})
    get_target_property(kind toru_${module} TYPE)
    if(NOT kind STREQUAL "INTERFACE_LIBRARY")
      string(PREPEND TORU_PC_LIBS "-ltoru_${module} ")
    endif()
  endif()
endforeach()
configure_file(cmake/toru.pc.in ${PROJECT_BINARY_DIR}/toru.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/toru.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
