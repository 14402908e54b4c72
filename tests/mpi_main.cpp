// SPDX-License-Identifier: BSD-3-Clause
// The one gtest main for MPI tests: every test runs on every rank, a failure on
// any rank fails the test, and only rank 0 prints gtest's report.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "skip_status.hpp"
#include "toru/core/error.hpp"

namespace {

// Reports each test's outcome agreed over all ranks, so a failure on rank 3 is
// visible in rank 0's output; non-zero ranks print their own failure details.
class rank_listener : public testing::EmptyTestEventListener {
 public:
  explicit rank_listener(int rank) : rank_(rank) {}

  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (rank_ != 0 && result.failed() && !reporting_)
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

  void OnTestEnd(const testing::TestInfo& info) override {
    int failed = info.result()->Failed() ? 1 : 0, ranks_failed = 0;
    MPI_Allreduce(&failed, &ranks_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    // gtest still attributes assertions to this test during OnTestEnd, and fires OnTestEnd in
    // reverse listener order, so this failure is recorded before the printer reports the test.
    if (ranks_failed > 0 && !info.result()->Failed()) {
      reporting_ = true;
      ADD_FAILURE() << "failed on " << ranks_failed << " other rank(s); their [rank N] lines say why";
      reporting_ = false;
    }
  }

 private:
  int rank_;
  bool reporting_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  toru::set_error_rank(rank);

  testing::InitGoogleTest(&argc, argv);
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new rank_listener(rank));

  int local = RUN_ALL_TESTS(), global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  // Skipped only when every rank skipped every test: one rank that ran a test makes it a pass or a
  // failure, never a skip.
  int skipped = toru::test::all_tests_skipped() ? 1 : 0, all_skipped = 0;
  MPI_Allreduce(&skipped, &all_skipped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  if (global == 0 && all_skipped == 1) return toru::test::all_skipped_exit_code;
  return global;
}
