# ctest driver: install, then build small consumers against the installed prefix: a C++ project,
# a C-only project and a Fortran-only project through find_package(toru), and a C and a Fortran
# program through pkg-config alone (mpicc / mpifort), as a Makefile-based code would.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
foreach(header toru/detail/c_guard.hpp toru/comm/c_guard.hpp toru/config.hpp.in toru/version.h.in)
  if(EXISTS ${PREFIX}/include/${header})
    message(FATAL_ERROR "${header} is internal but was installed")
  endif()
endforeach()

# C++ consumer (find_package with the topology component, and the whole library from C).
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC}/consumer -B ${CONSUMER_BUILD}/cxx -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX})
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
foreach(component core topology comm fft swap)
  if(NOT EXISTS ${pc_dir}/toru-${component}.pc)
    message(FATAL_ERROR "toru-${component}.pc was not installed in ${pc_dir}")
  endif()
endforeach()

# What a component links is its own: fft never carries swap's ONNX/protobuf, nor GPU libraries in a
# build without them; core carries neither MPI nor CUDA.
pc_flags(fft_libs --libs toru-fft)
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
pc_flags(core_libs --libs toru-core)
if(core_libs MATCHES "cuda|nccl|mpi|onnx")
  message(FATAL_ERROR "pkg-config --libs toru-core lists more than core needs: ${core_libs}")
endif()

# A C program with mpicc and pkg-config's flags alone, from the fft component and from toru (all).
foreach(package toru-fft toru)
  pc_flags(flags --cflags --libs ${package})
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${MPICC} ${CONSUMER_SRC}/consumer_c/fft_impulse.c ${flags} -o ${CONSUMER_BUILD}/pc_c_${package})
  run(${CONSUMER_BUILD}/pc_c_${package})
  message(STATUS "mpicc + pkg-config ${package}: ${last_output}")
endforeach()

# A Fortran program with mpifort: `mpifort prog.f90 $(pkg-config --cflags --libs toru)` must link the
# module library; toru-fortran is the component alone.
if(FORTRAN)
  foreach(package toru-fortran toru)
    pc_flags(flags --cflags --libs ${package})
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
