# SPDX-License-Identifier: BSD-3-Clause
# Every external dependency is found here, once, so the configure summary and
# the installed toruConfig.cmake see the same picture.
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(FFTW REQUIRED)
find_package(HWLOC REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(benchmark QUIET)  # micro-benchmarks (not tests); skipped when missing
find_package(ONNX QUIET)  # swap/ ONNX import; off when missing
find_package(ZLIB REQUIRED)  # train/: the gzip'd Fashion-MNIST IDX files
if(BUILD_SHARED_LIBS)
  # cmake/toru_exports.py writes each shared library's version script (its exported symbols).
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()
find_package(Protobuf QUIET)
# train/: oneDNN (Debian libdnnl-dev, OpenMP runtime). Its CMake config `dnnl` insists on the
# OpenCL headers and loader (the Debian build enables the OpenCL GPU runtime, which toru does not
# use), so the library is located directly and wrapped in the same target name, DNNL::dnnl.
find_path(TORU_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(TORU_DNNL_LIBRARY dnnl)
find_package(OpenMP QUIET COMPONENTS CXX)
# Under TSan the OpenMP regions are compiled serial (libgomp still linked for omp_* calls): GCC's
# libgomp is not instrumented, so TSan cannot see a region's fork and join and reports every shared
# variable of every region as a race, and recording those reports (suppressed, tests/tsan.supp)
# made a training step hours long. Nothing TSan could check is lost: toru's own threads stay checked.
if(TORU_SANITIZE STREQUAL "thread" AND TARGET OpenMP::OpenMP_CXX)
  set_property(TARGET OpenMP::OpenMP_CXX PROPERTY INTERFACE_COMPILE_OPTIONS
               $<$<COMPILE_LANGUAGE:CXX>:-Wno-unknown-pragmas>)
endif()
set(TORU_HAVE_TRAIN OFF)
if(TORU_DNNL_INCLUDE_DIR AND TORU_DNNL_LIBRARY AND OpenMP_CXX_FOUND)
  set(TORU_HAVE_TRAIN ON)
  if(NOT TARGET DNNL::dnnl)
    add_library(DNNL::dnnl UNKNOWN IMPORTED)
    set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${TORU_DNNL_LIBRARY}
                                                INTERFACE_INCLUDE_DIRECTORIES ${TORU_DNNL_INCLUDE_DIR})
  endif()
else()
  message(STATUS "oneDNN (libdnnl-dev) or OpenMP not found: train/ is skipped")
endif()

# topology/bench: ns-3 (Debian libns3-dev 3.37) for the cross-check of the packet model's TCP.
# Located directly: its pkg-config files carry a malformed include flag. Optional.
find_path(TORU_NS3_INCLUDE_DIR ns3/tcp-bbr.h)
set(TORU_NS3_LIBRARIES)
foreach(_ns3 core network internet point-to-point traffic-control applications)
  find_library(TORU_NS3_${_ns3}_LIBRARY NAMES ns3-${_ns3} ns3.37-${_ns3})
  list(APPEND TORU_NS3_LIBRARIES ${TORU_NS3_${_ns3}_LIBRARY})
endforeach()
set(TORU_HAVE_NS3 OFF)
if(TORU_NS3_INCLUDE_DIR AND NOT TORU_NS3_LIBRARIES MATCHES "NOTFOUND")
  set(TORU_HAVE_NS3 ON)
else()
  message(STATUS "ns-3 (libns3-dev) not found: topology/bench/ns3_shared_link is skipped")
endif()

include(CheckLanguage)
check_language(Fortran)
set(TORU_HAVE_FORTRAN OFF)
if(CMAKE_Fortran_COMPILER)
  enable_language(Fortran)
  find_package(MPI COMPONENTS Fortran QUIET)
  set(TORU_HAVE_FORTRAN ON)
endif()

# Optional GPU parts: AUTO turns a part on when its toolkit is found.
function(toru_resolve_option name found)
  if(${name} STREQUAL "AUTO")
    set(value ${found})
  elseif(${name})
    if(NOT ${found})
      message(FATAL_ERROR "${name}=ON but the dependency was not found")
    endif()
    set(value ON)
  else()
    set(value OFF)
  endif()
  set(${name}_RESOLVED ${value} PARENT_SCOPE)
endfunction()

set(cuda_found OFF)
if(NOT TORU_ENABLE_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(cuda_found ON)
    endif()
  endif()
endif()
toru_resolve_option(TORU_ENABLE_CUDA ${cuda_found})
set(TORU_ENABLE_CUDA ${TORU_ENABLE_CUDA_RESOLVED})

set(nccl_found OFF)
set(cudnn_found OFF)
if(TORU_ENABLE_CUDA)
  find_package(NCCL QUIET)
  if(NCCL_FOUND)
    set(nccl_found ON)
  endif()
  find_library(TORU_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(TORU_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(TORU_CUDNN_LIBRARY AND TORU_CUDNN_INCLUDE_DIR)
    set(cudnn_found ON)
  endif()
endif()
toru_resolve_option(TORU_ENABLE_NCCL ${nccl_found})
set(TORU_ENABLE_NCCL ${TORU_ENABLE_NCCL_RESOLVED})
toru_resolve_option(TORU_ENABLE_CUDNN ${cudnn_found})
set(TORU_ENABLE_CUDNN ${TORU_ENABLE_CUDNN_RESOLVED})

set(TORU_ENABLE_ONNX OFF)
if(ONNX_FOUND AND Protobuf_FOUND)
  set(TORU_ENABLE_ONNX ON)
endif()

# tune/: OTF2 for the trace of libtoru_tune_pmpi.so (Debian libotf2-trace-dev); without it the tool
# still profiles and diagnoses, and says that it writes no trace.
find_path(TORU_OTF2_INCLUDE_DIR otf2/otf2.h)
find_library(TORU_OTF2_LIBRARY otf2)
set(TORU_HAVE_OTF2 OFF)
if(TORU_OTF2_INCLUDE_DIR AND TORU_OTF2_LIBRARY)
  set(TORU_HAVE_OTF2 ON)
else()
  message(STATUS "OTF2 not found (apt install libotf2-trace-dev): libtoru_tune_pmpi.so writes no OTF2 trace")
endif()
# stream/ (optional): zstd, lz4, libpng, zlib and the header-only websocketpp + standalone asio.
# The libraries are linked by plain name so the installed toruConfig.cmake needs no find module.
find_library(TORU_ZSTD_LIBRARY zstd)
find_library(TORU_LZ4_LIBRARY lz4)
find_library(TORU_PNG_LIBRARY png)
find_library(TORU_Z_LIBRARY z)
find_path(TORU_ZSTD_INCLUDE_DIR zstd.h)
find_path(TORU_LZ4_INCLUDE_DIR lz4.h)
find_path(TORU_PNG_INCLUDE_DIR png.h)
find_path(TORU_WEBSOCKETPP_INCLUDE_DIR websocketpp/server.hpp)
find_path(TORU_ASIO_INCLUDE_DIR asio.hpp)
set(TORU_ENABLE_STREAM ON)
foreach(v TORU_ZSTD_LIBRARY TORU_LZ4_LIBRARY TORU_PNG_LIBRARY TORU_Z_LIBRARY TORU_ZSTD_INCLUDE_DIR TORU_LZ4_INCLUDE_DIR
          TORU_PNG_INCLUDE_DIR TORU_WEBSOCKETPP_INCLUDE_DIR TORU_ASIO_INCLUDE_DIR)
  if(NOT ${v})
    set(TORU_ENABLE_STREAM OFF)
    message(STATUS "stream/ is off: ${v} not found (apt-get install libzstd-dev liblz4-dev libpng-dev zlib1g-dev "
                   "libwebsocketpp-dev libasio-dev)")
    break()
  endif()
endforeach()
