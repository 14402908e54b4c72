# Installed package: headers, libraries, toruConfig.cmake (+ version) and toru.pc.
set(TORU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/toru)
install(FILES ${PROJECT_BINARY_DIR}/generated/toru/config.hpp ${PROJECT_BINARY_DIR}/generated/toru/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/toru)
install(EXPORT toruTargets NAMESPACE toru:: DESTINATION ${TORU_CMAKE_DIR})
configure_package_config_file(cmake/toruConfig.cmake.in ${PROJECT_BINARY_DIR}/toruConfig.cmake
  INSTALL_DESTINATION ${TORU_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/toruConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/toruConfig.cmake ${PROJECT_BINARY_DIR}/toruConfigVersion.cmake
  cmake/FindFFTW.cmake cmake/FindHWLOC.cmake cmake/FindNCCL.cmake DESTINATION ${TORU_CMAKE_DIR})

# toru.pc: static libraries listed dependents first, then what they need.
set(TORU_PC_LIBS "")
foreach(module IN LISTS TORU_MODULES)
  if(module STREQUAL "core")
    string(PREPEND TORU_PC_LIBS "-ltoru_core_mpi ")
  endif()
  if(TARGET toru_${module})
    get_target_property(kind toru_${module} TYPE)
    if(NOT kind STREQUAL "INTERFACE_LIBRARY")
      string(PREPEND TORU_PC_LIBS "-ltoru_${module} ")
    endif()
  endif()
endforeach()
set(TORU_PC_EXTRA "")
if(TORU_ENABLE_ONNX)
  string(APPEND TORU_PC_EXTRA " -lonnx -lonnx_proto -lprotobuf")
endif()
if(TORU_ENABLE_CUDA)
  string(APPEND TORU_PC_EXTRA " -L${CUDAToolkit_LIBRARY_DIR} -lcufft -lcudart")
endif()
if(TORU_ENABLE_NCCL)
  get_filename_component(nccl_dir ${NCCL_LIBRARY} DIRECTORY)
  string(APPEND TORU_PC_EXTRA " -L${nccl_dir} -lnccl")
endif()
# The prefix is found from the .pc file's own place, so an installed tree can be moved.
file(RELATIVE_PATH TORU_PC_UP ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(cmake/toru.pc.in ${PROJECT_BINARY_DIR}/toru.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/toru.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
