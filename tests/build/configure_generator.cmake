# SPDX-License-Identifier: BSD-3-Clause
# ctest driver: configure the source tree with GENERATOR (tests and apps off: the library's
# targets are what differ between generators), then build TARGET.
file(REMOVE_RECURSE ${BINARY_DIR})
set(args -S ${SOURCE_DIR} -B ${BINARY_DIR} -G "${GENERATOR}" -DTORU_BUILD_TESTS=OFF -DTORU_BUILD_APPS=OFF
    -DTORU_ENABLE_CUDA=${TORU_ENABLE_CUDA})
if(CUDA_ARCHITECTURES)
  list(APPEND args "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}")
endif()
if(CXX_LAUNCHER)
  list(APPEND args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER} -DCMAKE_C_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with '${GENERATOR}' failed (${rc}):\n${out}\n${err}")
endif()
# The summary claims only what is built: cuDNN has no code behind it until train/ exists.
if(NOT EXISTS ${SOURCE_DIR}/train/CMakeLists.txt AND out MATCHES "cuDNN +ON")
  message(FATAL_ERROR "the configure summary reports cuDNN ON, but no module uses it:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${TARGET} with '${GENERATOR}' failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "'${GENERATOR}': configured, ${TARGET} built")
file(REMOVE_RECURSE ${BINARY_DIR})
