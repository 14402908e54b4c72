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

# pkg-config: one file per component, each listing its own libraries and requiring the components
# it builds on, so `pkg-config --libs toru-fft` names fft's needs and nothing of swap's (ONNX,
# protobuf). The libraries are static, so what a component's archive references is in its Libs
# (not Libs.private, which plain `--libs` ignores): the CUDA runtime, cuFFT and NCCL appear in
# toru-comm / toru-fft only in a build with TORU_ENABLE_CUDA / _NCCL. toru.pc requires them all.
# The prefix is found from the .pc file's own place, so an installed tree can be moved.
file(RELATIVE_PATH TORU_PC_UP ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
set(toru_pc_cxx_runtime "-lstdc++ -lm")
set(toru_pc_cuda "")
if(TORU_ENABLE_CUDA)
  set(toru_pc_cuda "-L${CUDAToolkit_LIBRARY_DIR}")
endif()

# toru_write_pc(<component> <description> REQUIRES ... LIBS ...): writes and installs toru-<component>.pc
# (or toru.pc for the component "toru").
function(toru_write_pc component description)
  cmake_parse_arguments(arg "" "" "REQUIRES;LIBS" ${ARGN})
  if(component STREQUAL "toru")
    set(pc_name toru)
  else()
    set(pc_name toru-${component})
  endif()
  set(pc_description "${description}")
  list(JOIN arg_REQUIRES " " pc_requires)
  list(JOIN arg_LIBS " " pc_libs)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/toru-component.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

set(toru_pc_all toru-core)
toru_write_pc(core "toru core: errors, logging, the C result codes and version (no MPI, no GPU)"
  REQUIRES fmt
  LIBS "-L\${libdir}" -ltoru_core ${toru_pc_cxx_runtime})
if(TARGET toru_topology)
  # ompi-cxx, not ompi-c: compiled as C++, Open MPI's mpi.h pulls in its C++ bindings, whose inline
  # code references libmpi_cxx.
  toru_write_pc(topology "toru topology: torus model, rank mapping, network model"
    REQUIRES toru-core ompi-cxx hwloc
    LIBS "-L\${libdir}" -ltoru_topology -ltoru_core_mpi)
  list(APPEND toru_pc_all toru-topology)
endif()
if(TARGET toru_comm)
  set(libs -ltoru_comm -ltoru_core_device)
  if(TORU_ENABLE_NCCL)
    get_filename_component(nccl_dir ${NCCL_LIBRARY} DIRECTORY)
    list(APPEND libs -L${nccl_dir} -lnccl)
  endif()
  if(TORU_ENABLE_CUDA)
    list(APPEND libs ${toru_pc_cuda} -lcudart)
  endif()
  toru_write_pc(comm "toru comm: torus-aware all-to-all (C: toru/comm.h)"
    REQUIRES toru-topology
    LIBS "-L\${libdir}" ${libs} -lpthread)
  list(APPEND toru_pc_all toru-comm)
endif()
if(TARGET toru_fft)
  set(libs -ltoru_fft)
  if(TORU_ENABLE_CUDA)
    list(APPEND libs ${toru_pc_cuda} -lcufft -lcudart)
  endif()
  toru_write_pc(fft "toru fft: parallel 3D and distributed 1D FFTs (C: toru/fft.h)"
    REQUIRES toru-comm fftw3 fftw3f
    LIBS "-L\${libdir}" ${libs})
  list(APPEND toru_pc_all toru-fft)
endif()
if(TARGET toru_fft_fortran)
  # The module file toru_fft.mod lies in includedir, which Cflags names (-I also finds modules).
  toru_write_pc(fortran "toru Fortran bindings: module toru_fft"
    REQUIRES toru-fft
    LIBS "-L\${libdir}" -ltoru_fft_fortran)
  list(APPEND toru_pc_all toru-fortran)
endif()
if(TARGET toru_swap)
  set(libs -ltoru_swap)
  if(TORU_ENABLE_ONNX)
    list(APPEND libs -lonnx -lonnx_proto -lprotobuf)
  endif()
  toru_write_pc(swap "toru swap: memory planner for training graphs (C++ only)"
    REQUIRES toru-core
    LIBS "-L\${libdir}" ${libs})
  list(APPEND toru_pc_all toru-swap)
endif()
if(TARGET toru_train)
  get_filename_component(dnnl_dir ${TORU_DNNL_LIBRARY} DIRECTORY)
  toru_write_pc(train "toru train: executes swap graphs forward and backward (oneDNN CPU backend; C++ only)"
    REQUIRES toru-swap
    LIBS "-L\${libdir}" -ltoru_train -L${dnnl_dir} -ldnnl -lgomp)
  list(APPEND toru_pc_all toru-train)
endif()
toru_write_pc(toru "Torus-aware MPI all-to-all, parallel FFT and large-model memory planning (all components)"
  REQUIRES ${toru_pc_all})
