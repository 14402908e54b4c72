# SPDX-License-Identifier: BSD-3-Clause
# Runs an MPI program and checks what it printed (stdout and stderr together):
#   cmake -DMPIEXEC=... -DMPIEXEC_FLAGS=a,b -DRANKS=n -DPROGRAM=path -DEXPECT=regex
#         [-DFORBID=regex] [-DCOUNT=regex -DCOUNT_EXPECTED=n] -P check_program_output.cmake
string(REPLACE "," ";" MPIEXEC_FLAGS "${MPIEXEC_FLAGS}")
execute_process(COMMAND ${MPIEXEC} -n ${RANKS} ${MPIEXEC_FLAGS} ${PROGRAM}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(all "${out}${err}")
message("${all}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "expected output matching '${EXPECT}'")
endif()
if(DEFINED FORBID AND all MATCHES "${FORBID}")
  message(FATAL_ERROR "output matches the forbidden '${FORBID}'")
endif()
if(DEFINED COUNT)
  string(REGEX MATCHALL "${COUNT}" found "${all}")
  list(LENGTH found n)
  if(NOT n EQUAL COUNT_EXPECTED)
    message(FATAL_ERROR "'${COUNT}' printed ${n} times, expected ${COUNT_EXPECTED}")
  endif()
endif()
