# SPDX-License-Identifier: BSD-3-Clause
# ctest driver: installs toru, then builds small consumers against the installed prefix: a C++
# project, a C-only project and a Fortran-only project through find_package(toru), and a C and a
# Fortran program through pkg-config alone (mpicc / mpifort), as a Makefile-based code would.
# MODE picks what is installed:
#  - install: this build tree, `cmake --install` into PREFIX (shared or static, as it was built);
#  - deb: this build tree's Debian package (`cpack -G DEB`), unpacked with `dpkg -x` into a scratch
#    root, PREFIX = <root>/usr; every package it depends on must be a known, installed one;
#  - static: a second build of the libraries alone (no tests, apps, examples) with
#    BUILD_SHARED_LIBS=OFF and this tree's options, installed into PREFIX; pkg-config links with
#    --static (Libs.private, Requires.private).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

if(NOT MODE)
  set(MODE install)
endif()
file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
set(pc_static "")
if(MODE STREQUAL "deb")
  file(REMOVE_RECURSE ${WORK_DIR})
  run(${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/package)
  file(GLOB deb ${WORK_DIR}/package/*.deb)
  list(LENGTH deb count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "cpack made ${count} .deb files: ${deb}")
  endif()
  # A clean Debian 12 installs the package next to its dependencies: each one is a Debian package
  # (installed here, so the name is real), none is a library only this machine has.
  run(dpkg-deb --field ${deb} Depends)
  string(STRIP "${last_output}" depends)
  message(STATUS "Depends: ${depends}")
  string(REPLACE ", " ";" depends "${depends}")
  foreach(package IN LISTS depends)
    string(REGEX REPLACE " .*" "" package "${package}")
    execute_process(COMMAND dpkg-query -W -f=\${Status} ${package} OUTPUT_VARIABLE status RESULT_VARIABLE rc
                    ERROR_QUIET)
    if(NOT rc EQUAL 0 OR NOT status MATCHES "install ok installed")
      message(FATAL_ERROR "the package depends on '${package}', which is not an installed Debian package")
    endif()
  endforeach()
  run(dpkg-deb --contents ${deb})
  foreach(file include/toru/toru.h lib/cmake/toru/toruConfig.cmake lib/pkgconfig/toru.pc)
    if(NOT last_output MATCHES "./usr/${file}")
      message(FATAL_ERROR "the package lacks /usr/${file}:\n${last_output}")
    endif()
  endforeach()
  run(dpkg -x ${deb} ${WORK_DIR}/root)
  set(PREFIX ${WORK_DIR}/root/usr)
elseif(MODE STREQUAL "static")
  string(REPLACE "|" ";" TORU_OPTIONS "${TORU_OPTIONS}")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR} -DBUILD_SHARED_LIBS=OFF
      -DTORU_BUILD_TESTS=OFF -DTORU_BUILD_APPS=OFF -DTORU_BUILD_EXAMPLES=OFF ${TORU_OPTIONS})
  run(${CMAKE_COMMAND} --build ${WORK_DIR} --parallel 2)
  run(${CMAKE_COMMAND} --install ${WORK_DIR} --prefix ${PREFIX})
  file(GLOB shared ${PREFIX}/lib*/libtoru_*.so* ${PREFIX}/lib*/*/libtoru_*.so*)
  list(FILTER shared EXCLUDE REGEX "libtoru_tune_pmpi")
  if(shared)
    message(FATAL_ERROR "a static build installed shared libraries: ${shared}")
  endif()
  set(pc_static --static)
else()
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
endif()
foreach(header toru/detail/c_guard.hpp toru/comm/c_guard.hpp toru/config.hpp.in toru/version.h.in)
  if(EXISTS ${PREFIX}/include/${header})
    message(FATAL_ERROR "${header} is internal but was installed")
  endif()
endforeach()
# Programs built by pkg-config's flags alone find the shared libraries here; the libraries find
# each other through their own RUNPATH ($ORIGIN).
file(GLOB_RECURSE core_lib ${PREFIX}/libtoru_core.*)
list(GET core_lib 0 core_lib)
get_filename_component(lib_dir "${core_lib}" DIRECTORY)
set(ENV{LD_LIBRARY_PATH} "${lib_dir}:$ENV{LD_LIBRARY_PATH}")

# C++ consumer (find_package with the topology component, and the whole library from C).
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC}/consumer -B ${CONSUMER_BUILD}/cxx -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX})
run(${CMAKE_COMMAND} -LA -N ${CONSUMER_BUILD}/cxx)
if(NOT last_output MATCHES "toru_DIR:PATH=${PREFIX}/")
  message(FATAL_ERROR "the consumer found a toru other than the one installed in ${PREFIX}:\n${last_output}")
endif()
run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD}/cxx)
run(${CONSUMER_BUILD}/cxx/toru_consumer_c)
run(${CONSUMER_BUILD}/cxx/toru_consumer 4x4x8)
message(STATUS "consumer printed: ${last_output}")
if(NOT last_output MATCHES "bound")
  message(FATAL_ERROR "consumer output lacks the bound: ${last_output}")
endif()

# A C-only project: find_package(toru) must work without the project enabling C++.
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC}/consumer_c -B ${CONSUMER_BUILD}/c_only -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX})
run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD}/c_only)
run(${CONSUMER_BUILD}/c_only/toru_c_only)
message(STATUS "C-only consumer printed: ${last_output}")

if(FORTRAN)
  run(${CMAKE_COMMAND} -S ${CONSUMER_SRC}/consumer_fortran -B ${CONSUMER_BUILD}/fortran_only -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${PREFIX})
  run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD}/fortran_only)
  run(${CONSUMER_BUILD}/fortran_only/toru_fortran_only)
  message(STATUS "Fortran-only consumer printed: ${last_output}")
endif()

# pkg-config: one file per component.
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config not found: its checks are skipped")
  return()
endif()
file(GLOB_RECURSE pc_file ${PREFIX}/toru.pc)
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
function(pc_flags out)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} failed: ${err}")
  endif()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
foreach(component core core-mpi core-device topology comm fft swap tune stream)
  if(NOT EXISTS ${pc_dir}/toru-${component}.pc)
    message(FATAL_ERROR "toru-${component}.pc was not installed in ${pc_dir}")
  endif()
endforeach()

# What a component links is its own: fft never carries swap's ONNX/protobuf, nor GPU libraries in a
# build without them; core carries neither MPI nor CUDA.
pc_flags(fft_libs ${pc_static} --libs toru-fft)
message(STATUS "pkg-config --libs toru-fft: ${fft_libs}")
if(fft_libs MATCHES "onnx|protobuf|toru_swap")
  message(FATAL_ERROR "pkg-config --libs toru-fft lists swap's dependencies: ${fft_libs}")
endif()
if(NOT CUDA AND fft_libs MATCHES "cuda|cufft")
  message(FATAL_ERROR "pkg-config --libs toru-fft lists CUDA in a build without it: ${fft_libs}")
endif()
if(NOT NCCL AND fft_libs MATCHES "nccl")
  message(FATAL_ERROR "pkg-config --libs toru-fft lists NCCL in a build without it: ${fft_libs}")
endif()
pc_flags(core_libs ${pc_static} --libs toru-core)
if(core_libs MATCHES "cuda|nccl|mpi|onnx")
  message(FATAL_ERROR "pkg-config --libs toru-core lists more than core needs: ${core_libs}")
endif()

# A C program with mpicc and pkg-config's flags alone, from the fft component and from toru (all).
foreach(package toru-fft toru)
  pc_flags(flags ${pc_static} --cflags --libs ${package})
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${MPICC} ${CONSUMER_SRC}/consumer_c/fft_impulse.c ${flags} -o ${CONSUMER_BUILD}/pc_c_${package})
  run(${CONSUMER_BUILD}/pc_c_${package})
  message(STATUS "mpicc + pkg-config ${package}: ${last_output}")
endforeach()

# A Fortran program with mpifort: `mpifort prog.f90 $(pkg-config --cflags --libs toru)` must link the
# module library; toru-fortran is the component alone.
if(FORTRAN)
  foreach(package toru-fortran toru)
    pc_flags(flags ${pc_static} --cflags --libs ${package})
    separate_arguments(flags UNIX_COMMAND "${flags}")
    file(MAKE_DIRECTORY ${CONSUMER_BUILD}/pc_f_${package})
    execute_process(COMMAND ${MPIFORT} ${CONSUMER_SRC}/consumer_fortran/fft_impulse.f90 ${flags}
                    -o ${CONSUMER_BUILD}/pc_f_${package}/prog WORKING_DIRECTORY ${CONSUMER_BUILD}/pc_f_${package}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "mpifort + pkg-config ${package} failed:\n${out}\n${err}")
    endif()
    run(${CONSUMER_BUILD}/pc_f_${package}/prog)
    message(STATUS "mpifort + pkg-config ${package}: ${last_output}")
  endforeach()
endif()
