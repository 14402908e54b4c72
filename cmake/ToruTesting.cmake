# SPDX-License-Identifier: BSD-3-Clause
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
# Under ThreadSanitizer, hide what the uninstrumented Open MPI reports about itself (never a toru frame);
# the out-of-memory tests need a failed allocation returned, as under ASan (CMakePresets.json).
# history_size=7: the longest access history, so that the other side of a report restores its
# stack: Open MPI's progress engine copies a send buffer in whichever thread calls into MPI (the
# all-to-all's phase worker), and only a restored stack shows the mca_* frame its suppression matches.
if(TORU_SANITIZE STREQUAL "thread")
  list(APPEND TORU_MPI_TEST_ENV
    "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp:allocator_may_return_null=1:history_size=7")
endif()

# The exit code of tests/unit_main.cpp and tests/mpi_main.cpp when every test skipped
# (tests/skip_status.hpp); scripts that skip use it too.
set(TORU_TEST_SKIP_CODE 77)

# The sanitizer tier CI runs (scripts/test-sanitizers.sh --ci): the test programs of the code that
# runs threads next to MPI or manages its own buffers - the pipelined all-to-all, split-phase calls,
# the FFT's agreement and error paths, CGDP's host summing, data-parallel overlap, the stream queue
# and publisher, swap's graph rewriting, the PMPI shim. Their tests are labelled `sanitize` and the
# target `toru_sanitize_tier` builds exactly these programs, so CI builds a fraction of the tree
# under ASan and TSan.
set(TORU_SANITIZE_TIER
  core_agreement_test core_error_test comm_alltoall_test comm_split_phase_test comm_collective_errors_test
  fft_split_phase_test fft_collective_errors_test fft_batch_test train_cgdp_test train_data_parallel_test
  stream_queue_test stream_flow_control_test stream_publisher_test swap_graph_test swap_plan_test
  tune_replay_test)
add_custom_target(toru_sanitize_tier)

# toru_sanitize_tier_member(<target> <test>...): a program of the tier and the tests that run it.
function(toru_sanitize_tier_member target)
  if(target IN_LIST TORU_SANITIZE_TIER)
    add_dependencies(toru_sanitize_tier ${target})
    set_property(TEST ${ARGN} APPEND PROPERTY LABELS sanitize)
  endif()
endfunction()

# Under a sanitizer every program runs several times slower (ASan+UBSan 2-5x, TSan 5-15x, more
# oversubscribed): test timeouts are multiplied by this, so a whole-suite run under the asan/tsan
# presets reports findings, not the plain build's fixed timeouts.
set(TORU_SANITIZER_TIMEOUT_FACTOR 6 CACHE STRING "test timeouts are multiplied by this under TORU_SANITIZE")

# toru_add_unit_test(<name> SOURCES ... LIBS ... [LABELS ...])
function(toru_add_unit_test name)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} toru_test_unit_main toru_warnings)
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;${arg_LABELS}" TIMEOUT ${arg_TIMEOUT}
    SKIP_RETURN_CODE ${TORU_TEST_SKIP_CODE})
  toru_sanitize_tier_member(${name} ${name})
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
    set(labels "mpi;${arg_LABELS}")
    # The fast tier (ctest -LE long) runs every test at up to 4 ranks; 5 to 8 ranks oversubscribe
    # a small machine and find little that 3 and 4 ranks miss.
    if(n GREATER_EQUAL 5)
      list(APPEND labels long)
    endif()
    # A test whose every test skipped on every rank (no device) is reported skipped, never passed;
    # one that failed is a failure even if another test skipped (tests/mpi_main.cpp).
    set_tests_properties(${name}_np${n} PROPERTIES
      LABELS "${labels}" TIMEOUT ${arg_TIMEOUT} PROCESSORS ${n}
      ENVIRONMENT "${TORU_MPI_TEST_ENV}" SKIP_RETURN_CODE ${TORU_TEST_SKIP_CODE})
    toru_sanitize_tier_member(${name} ${name}_np${n})
  endforeach()
endfunction()

# The fast tier is `ctest -LE long`. Besides the 5-8 rank registrations (above), Slurm/PBS
# (tests/jobs) and the calibration tests, the slowest tests of a full run are labelled `long`: each
# takes from half a minute to several on 2 cores (PyTorch exports and references, a second
# configure and build, 6.5 GB all-to-alls, whole toru-train runs, a headless browser). Re-check the
# list against Testing/Temporary/CTestCostData.txt after a full `ctest -j1` when tests are added.
# The second group is the slowest of the remaining tier (CTestCostData of 2026-12-06, quiet VM: the
# header and SPDX builds, the install consumer, the window suite, DNS solver runs, the 4-rank DDP,
# and one or two rank counts of suites that run at several): with them the tier took 8.5 min, then
# 6.5; the same paths stay covered at other rank counts (fft3d_test runs on the window by default,
# python_ddp_np3, dns_solver_test_np1, the np3 runs of the forced-algorithm and CGDP suites).
set(TORU_LONG_TESTS
  swap_fidelity_test train_onnx_test train_torch_compare_test train_toru_train_onnx_np2 train_toru_train_np2
  train_cgdp_toru_train_np2 train_toru_train_swap_np2 train_swap_exec_test build_generator_Unix_Makefiles
  build_generator_Ninja comm_large_alltoall_test_np2 stream_browser stream_server_test dns_cli job_train
  build_public_headers build_spdx_headers install_consumer fft_window_test_np1 fft_window_test_np2
  fft_window_test_np4 fft_window_test_disabled_np3 python_ddp_np4 dns_solver_test_np2 dns_solver_test_np4
  fft3d_test_env2x2_np4 fft3d_test_a2a_np2 tune_validate_small_messages_preload
  tune_validate_small_messages_linked fft_window_test_np3 fft3d_test_indirect_np4 fft3d_test_pairwise_np4
  dns_solver_test_np3 train_cgdp_test_np2 train_cgdp_test_np4 fft3d_r2c_test_np2 train_trainer_test_np2)

# toru_finish_test_folder(): the last call of each CMakeLists.txt that adds tests (a test's
# properties can only be set in its own folder). Labels that folder's tests named in
# TORU_LONG_TESTS, and its calibration tests, `long`; under TORU_SANITIZE multiplies their timeouts
# by TORU_SANITIZER_TIMEOUT_FACTOR.
function(toru_finish_test_folder)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    if(t IN_LIST TORU_LONG_TESTS OR t MATCHES "calibration")
      get_test_property(${t} LABELS labels)
      if(NOT "long" IN_LIST labels)
        set_property(TEST ${t} APPEND PROPERTY LABELS long)
      endif()
    endif()
    if(NOT TORU_SANITIZE STREQUAL "")
      get_test_property(${t} TIMEOUT timeout)
      if(NOT timeout)
        set(timeout 1500)  # ctest's default
      endif()
      math(EXPR timeout "${timeout} * ${TORU_SANITIZER_TIMEOUT_FACTOR}")
      set_tests_properties(${t} PROPERTIES TIMEOUT ${timeout})
    endif()
  endforeach()
endfunction()
