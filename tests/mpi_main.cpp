// The one gtest main for MPI tests: every test runs on every rank, a failure on
// any rank fails the test, and only rank 0 prints gtest's report.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "toru/core/error.hpp"

namespace {

// Reports each test's outcome agreed over all ranks, so a failure on rank 3 is
// visible in rank 0's output; non-zero ranks print their own failure details.
class rank_listener : public testing::EmptyTestEventListener {
 public:
  explicit rank_listener(int rank) : rank_(rank) {}

  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (rank_ != 0 && result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

  void OnTestEnd(const testing::TestInfo& info) override {
    int failed = info.result()->Failed() ? 1 : 0, ranks_failed = 0;
    MPI_Allreduce(&failed, &ranks_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0 && ranks_failed > 0)
      std::fprintf(stdout, "[  FAILED  ] %s.%s failed on %d rank(s)\n", info.test_suite_name(), info.name(),
                   ranks_failed);
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  toru::detail::set_error_rank(rank);

  testing::InitGoogleTest(&argc, argv);
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new rank_listener(rank));

  int local = RUN_ALL_TESTS(), global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return global;
}
