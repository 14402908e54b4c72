# Test registration. Unit tests run as one process; MPI tests run under mpiexec
# once per rank count and are registered as <name>_np<N>.
include(GoogleTest)
find_package(GTest REQUIRED)

set(TORU_MPIEXEC_FLAGS --oversubscribe)
# Open MPI refuses to run as root unless told; CI and the dev machines are root.
execute_process(COMMAND id -u OUTPUT_VARIABLE toru_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(toru_uid STREQUAL "0")
  list(APPEND TORU_MPIEXEC_FLAGS --allow-run-as-root)
endif()
# Containers often forbid the cross-memory attach that vader's single copy uses.
set(TORU_MPI_TEST_ENV
  OMPI_MCA_btl_vader_single_copy_mechanism=none
  OMPI_MCA_rmaps_base_oversubscribe=1
  OMPI_MCA_mpi_yield_when_idle=1)
# Under ThreadSanitizer, hide what the uninstrumented Open MPI reports about itself (never a toru frame).
if(TORU_SANITIZE STREQUAL "thread")
  list(APPEND TORU_MPI_TEST_ENV "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp")
endif()

# toru_add_unit_test(<name> SOURCES ... LIBS ... [LABELS ...])
function(toru_add_unit_test name)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} GTest::gtest GTest::gtest_main toru_warnings)
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;${arg_LABELS}" TIMEOUT ${arg_TIMEOUT})
endfunction()

# toru_add_mpi_test(<name> SOURCES ... LIBS ... RANKS 1 2 3 ... [LABELS ...] [TIMEOUT s])
function(toru_add_mpi_test name)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBS;RANKS;LABELS" ${ARGN})
  if(NOT arg_RANKS)
    message(FATAL_ERROR "toru_add_mpi_test(${name}): RANKS is required")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 180)
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} toru_test_mpi_main toru_warnings)
  foreach(n IN LISTS arg_RANKS)
    add_test(NAME ${name}_np${n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${TORU_MPIEXEC_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_np${n} PROPERTIES
      LABELS "mpi;${arg_LABELS}" TIMEOUT ${arg_TIMEOUT} PROCESSORS ${n}
      ENVIRONMENT "${TORU_MPI_TEST_ENV}")
    # A GPU test that skipped (no device) is reported as skipped, never as passed.
    if("gpu" IN_LIST arg_LABELS)
      set_tests_properties(${name}_np${n} PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
    endif()
  endforeach()
endfunction()
