# SPDX-License-Identifier: BSD-3-Clause
# The trainer's CUDA backend (train/src/cuda/: cuDNN + cuBLAS + a few kernels), included by
# train/CMakeLists.txt. Built whenever the CUDA toolkit and cuDNN are found, GPU or not, so CI
# compiles it; its tests (tests/train/*_gpu_test.cpp) skip without a device.
if(NOT TORU_ENABLE_CUDA OR NOT TORU_ENABLE_CUDNN)
  message(STATUS "train: CUDA backend not built (needs the CUDA toolkit and cuDNN; TORU_ENABLE_CUDA="
                 "${TORU_ENABLE_CUDA}, TORU_ENABLE_CUDNN=${TORU_ENABLE_CUDNN})")
  return()
endif()

# The kernels are an object library of their own, as in fft/: toru_train requires C++20, which this
# CMake cannot ask of nvcc (no CUDA20 dialect), and the kernels need only C++17.
add_library(toru_train_cuda_kernels OBJECT src/cuda/kernels.cu)
set_target_properties(toru_train_cuda_kernels PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
  POSITION_INDEPENDENT_CODE ON)
# kernels.cu runs the CPU backend's dropout hash (src/random.hpp, constexpr functions) on the device.
target_include_directories(toru_train_cuda_kernels PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_compile_options(toru_train_cuda_kernels PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)

target_sources(toru_train PRIVATE
  src/cuda/cuda_check.cpp
  src/cuda/cuda_memory.cpp
  src/cuda/cuda_context.cpp
  src/cuda/conv_cudnn.cpp
  src/cuda/batchnorm_cudnn.cpp
  src/cuda/pool_act_cudnn.cpp
  src/cuda/gemm_cublas.cpp
  src/cuda/loss_cudnn.cpp
  src/cuda/backend_cuda.cpp
  src/cuda/backend_kernels.cpp
  $<TARGET_OBJECTS:toru_train_cuda_kernels>)
# toru_train compiles no CUDA itself; its (absent) CUDA sources' dialect, so that the generators do
# not ask nvcc for CUDA20 on its behalf (see fft/CMakeLists.txt).
set_target_properties(toru_train PROPERTIES CUDA_STANDARD 17)
target_include_directories(toru_train PRIVATE ${TORU_CUDNN_INCLUDE_DIR})
target_link_libraries(toru_train PRIVATE ${TORU_CUDNN_LIBRARY} CUDA::cublas CUDA::cudart toru::core_device)
set(TORU_TRAIN_CUDA_BACKEND ON)
