# SPDX-License-Identifier: BSD-3-Clause
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

# pkg-config: one file per installed library (toru-<component>.pc, the component's name with '-' for
# '_'; toru-fortran for fft_fortran) and toru.pc requiring them all. Each file is generated from its
# target's links, so it cannot drift from the build: a toru library it links publicly becomes a
# Requires (toru-<dep>), an external one the pkg-config module that provides it (Requires) or its
# -L/-l flags (Libs); private links go to Requires.private / Libs.private, which only a static
# link (`pkg-config --static`) needs: a shared toru library records its own dependencies. So
# `pkg-config --libs toru-fft` names fft's needs and nothing of swap's (ONNX, protobuf), and GPU
# libraries only in a build with TORU_ENABLE_CUDA / _NCCL. The prefix is found from the .pc file's
# own place, so an installed tree can be moved.
file(RELATIVE_PATH TORU_PC_UP ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})

# Imported targets that a pkg-config module provides, as <target>=<module>. Open MPI's C++ module
# for MPI::MPI_CXX: compiled as C++, its mpi.h pulls in the C++ bindings (libmpi_cxx).
find_package(PkgConfig QUIET)
set(toru_pc_modules fmt::fmt=fmt nlohmann_json::nlohmann_json=nlohmann_json HWLOC::hwloc=hwloc
    FFTW::double=fftw3 FFTW::float=fftw3f FFTW::mpi=fftw3 ZLIB::ZLIB=zlib protobuf::libprotobuf=protobuf)
foreach(mpi MPI::MPI_C=ompi-c MPI::MPI_CXX=ompi-cxx MPI::MPI_Fortran=ompi-fort)
  string(REPLACE "=" ";" pair ${mpi})
  list(GET pair 1 module)
  if(PKG_CONFIG_FOUND)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --exists ${module} RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      list(APPEND toru_pc_modules ${mpi})
    endif()
  endif()
endforeach()

# toru_pc_name(<out> <target>): the .pc module of one of toru's libraries.
function(toru_pc_name out target)
  get_target_property(name ${target} EXPORT_NAME)
  if(NOT name)
    string(REGEX REPLACE "^toru_" "" name ${target})
  endif()
  if(name STREQUAL "fft_fortran")
    set(name fortran)
  endif()
  string(REPLACE "_" "-" name ${name})
  set(${out} toru-${name} PARENT_SCOPE)
endfunction()

# toru_pc_flags(<out> <file>): -L<dir> -l<name> for a library file.
function(toru_pc_flags out file)
  get_filename_component(dir ${file} DIRECTORY)
  get_filename_component(name ${file} NAME_WE)
  string(REGEX REPLACE "^lib" "" name ${name})
  set(flags -l${name})
  if(dir AND NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    set(flags -L${dir} ${flags})
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# toru_pc_resolve(<target> <links...>): sets pc_requires / pc_libs in the caller to what the given
# link items need, as pkg-config modules or flags.
function(toru_pc_resolve)
  set(requires "")
  set(libs "")
  foreach(item IN LISTS ARGN)
    # Build-only items go; what is linked either way stays.
    if(item MATCHES "^\\$<BUILD_INTERFACE:")
      continue()
    endif()
    string(REGEX REPLACE "^\\$<(LINK_ONLY|INSTALL_INTERFACE):(.*)>$" "\\2" item "${item}")
    if(item MATCHES "^\\$<" OR item MATCHES "^(toru_warnings|toru_internal)$" OR item STREQUAL "")
      continue()
    endif()
    if(TARGET ${item})
      get_target_property(aliased ${item} ALIASED_TARGET)
      if(aliased)
        set(item ${aliased})
      endif()
      get_target_property(imported ${item} IMPORTED)
      set(module "")
      foreach(pair IN LISTS toru_pc_modules)
        if(pair MATCHES "^(.*)=(.*)$" AND CMAKE_MATCH_1 STREQUAL item)
          set(module ${CMAKE_MATCH_2})
        endif()
      endforeach()
      if(module)
        list(APPEND requires ${module})
      elseif(NOT imported AND item MATCHES "^toru_")
        toru_pc_name(module ${item})
        list(APPEND requires ${module})
      elseif(item STREQUAL "Threads::Threads")
        list(APPEND libs -pthread)
      elseif(item MATCHES "^OpenMP::")
        list(APPEND libs -fopenmp)
      else()
        get_target_property(type ${item} TYPE)
        if(type STREQUAL "INTERFACE_LIBRARY")
          get_target_property(sub ${item} INTERFACE_LINK_LIBRARIES)
          if(sub)
            toru_pc_resolve(${sub})
            list(APPEND requires ${pc_requires})
            list(APPEND libs ${pc_libs})
          endif()
        else()
          set(location "")
          get_target_property(configs ${item} IMPORTED_CONFIGURATIONS)
          set(properties IMPORTED_LOCATION)
          foreach(config IN LISTS configs)
            list(APPEND properties IMPORTED_LOCATION_${config})
          endforeach()
          foreach(property IN LISTS properties)
            get_target_property(value ${item} ${property})
            if(value AND NOT location)
              set(location ${value})
            endif()
          endforeach()
          if(location)
            toru_pc_flags(flags ${location})
            list(APPEND libs ${flags})
          elseif(NOT imported)
            # One of the project's own static helpers: its archive is not installed, so no flags.
            message(WARNING "pkg-config: ${item} has no installed library")
          else()
            list(APPEND libs -l${item})
          endif()
        endif()
      endif()
    elseif(item MATCHES "^/")
      toru_pc_flags(flags ${item})
      list(APPEND libs ${flags})
    elseif(item MATCHES "^-")
      list(APPEND libs ${item})
    else()
      list(APPEND libs -l${item})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES requires)
  list(REMOVE_DUPLICATES libs)
  set(pc_requires ${requires} PARENT_SCOPE)
  set(pc_libs ${libs} PARENT_SCOPE)
endfunction()

# toru_write_pc(<target> <description>): writes and installs the .pc file of one toru library.
function(toru_write_pc target description)
  toru_pc_name(pc_name ${target})
  set(pc_description "${description}")
  get_target_property(type ${target} TYPE)
  get_target_property(public ${target} INTERFACE_LINK_LIBRARIES)
  set(private "")
  set(own "")
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(private ${target} LINK_LIBRARIES)
    get_target_property(output ${target} OUTPUT_NAME)
    if(NOT output)
      set(output ${target})
    endif()
    set(own "-L\${libdir}" -l${output})
    # A sanitized build's libraries need the sanitizer runtime in every program that links them.
    if(TORU_SANITIZER_LINK_FLAG)
      list(APPEND own ${TORU_SANITIZER_LINK_FLAG})
      target_link_options(${target} INTERFACE $<INSTALL_INTERFACE:${TORU_SANITIZER_LINK_FLAG}>)
    endif()
  endif()
  if(NOT public)
    set(public "")
  endif()
  if(NOT private)
    set(private "")
  endif()
  # A static archive's INTERFACE_LINK_LIBRARIES carries its private links as $<LINK_ONLY:...>:
  # those count as private here.
  set(public_items "")
  foreach(item IN LISTS public)
    if(NOT item MATCHES "^\\$<LINK_ONLY:")
      list(APPEND public_items "${item}")
    endif()
  endforeach()
  toru_pc_resolve(${public_items})
  set(requires ${pc_requires})
  set(libs ${own} ${pc_libs})
  toru_pc_resolve(${private})
  set(requires_private ${pc_requires})
  set(libs_private ${pc_libs})
  list(REMOVE_ITEM requires_private ${requires})
  list(REMOVE_ITEM libs_private ${libs})
  # A static library's C++ (and Fortran) objects need their runtimes wherever the link is not
  # driven by the C++ compiler (mpicc, mpifort).
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    list(APPEND libs_private -lstdc++ -lm)
    if(target STREQUAL "toru_fft_fortran")
      list(APPEND libs_private -lgfortran)
    endif()
  endif()
  list(JOIN requires ", " pc_requires)
  list(JOIN requires_private ", " pc_requires_private)
  list(JOIN libs " " pc_libs)
  list(JOIN libs_private " " pc_libs_private)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/toru-component.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  set_property(GLOBAL APPEND PROPERTY TORU_PC_MODULES ${pc_name})
endfunction()

set(toru_pc_descriptions
  core "toru core: errors, logging, the C result codes and version (no MPI, no GPU)"
  core_mpi "toru core: MPI helpers (argument agreement, error ranks)"
  core_device "toru core: GPU presence (the only core part that links the CUDA runtime)"
  topology "toru topology: torus model, rank mapping, network model"
  comm "toru comm: torus-aware all-to-all (C: toru/comm.h)"
  fft "toru fft: parallel 3D and distributed 1D FFTs (C: toru/fft.h)"
  fft_fortran "toru Fortran bindings: module toru_fft"
  swap "toru swap: memory planner for training graphs (C++ only)"
  train "toru train: executes swap graphs forward and backward (oneDNN CPU backend, C++ only)"
  tune_analysis "toru tune: rules engine, metrics and HTML report (C++ only)"
  tune "toru tune: online tuner of toru's knobs (C++ only)"
  stream "toru stream: flow-controlled streaming of simulation frames (C++ only)")
while(toru_pc_descriptions)
  list(POP_FRONT toru_pc_descriptions component description)
  if(TARGET toru_${component})
    toru_write_pc(toru_${component} "${description}")
  endif()
endwhile()

get_property(toru_pc_all GLOBAL PROPERTY TORU_PC_MODULES)
list(JOIN toru_pc_all ", " pc_requires)
set(pc_name toru)
set(pc_description "Torus-aware MPI all-to-all, parallel FFT and large-model memory planning (all components)")
set(pc_requires_private "")
set(pc_libs "")
set(pc_libs_private "")
configure_file(${PROJECT_SOURCE_DIR}/cmake/toru-component.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/toru.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/toru.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
