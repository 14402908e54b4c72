# SPDX-License-Identifier: BSD-3-Clause
# ctest driver: fails when PROGRAM's shared-library dependencies include the CUDA runtime.
execute_process(COMMAND ${LDD} ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ldd ${PROGRAM} failed: ${err}")
endif()
if(out MATCHES "libcudart|libcuda\\.so|libnccl|libcufft")
  message(FATAL_ERROR "${PROGRAM} links GPU libraries it does not use:\n${out}")
endif()
message(STATUS "${PROGRAM}: no CUDA libraries")
