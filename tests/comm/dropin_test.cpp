// SPDX-License-Identifier: BSD-3-Clause
// The drop-in calls as a production code uses them: what each call costs in MPI collectives (counted
// through the MPI profiling interface), cached plans that must not outlive their datatype, threads
// started only when needed and inside the rank's CPU set, large counts through derived datatypes.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "large_count.hpp"
#include "mpi_test.hpp"
#include "thread_placement.hpp"
#include "toru/comm.h"
#include "toru/comm/alltoall.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/error.hpp"

// ---- counting MPI calls (PMPI): every call below is MPI's own, counted ----

namespace {
std::map<std::string, int> calls;
bool counting = false;
void count(const char* name) {
  if (counting) ++calls[name];
}
}  // namespace

extern "C" {
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  count("MPI_Allreduce");
  return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  count("MPI_Alltoall");
  return PMPI_Alltoall(s, sc, st, r, rc, rt, c);
}
int MPI_Alltoallv(const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r, const int rc[],
                  const int rd[], MPI_Datatype rt, MPI_Comm c) {
  count("MPI_Alltoallv");
  return PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  count("MPI_Allgather");
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  count("MPI_Bcast");
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Barrier(MPI_Comm c) {
  count("MPI_Barrier");
  return PMPI_Barrier(c);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
  count("MPI_Comm_dup");
  return PMPI_Comm_dup(c, out);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  count("MPI_Comm_split");
  return PMPI_Comm_split(c, color, key, out);
}
}

namespace {

using toru::comm::alltoall_algorithm;
using toru::comm::alltoall_plan;
using toru::comm::communicator;

// The MPI calls `f` makes on this rank.
template <class F>
std::map<std::string, int> mpi_calls_of(F&& f) {
  calls.clear();
  counting = true;
  f();
  counting = false;
  return calls;
}

// A communicator of its own per test: the drop-in caches are per communicator.
struct fresh_comm {
  MPI_Comm c = MPI_COMM_NULL;
  fresh_comm() {
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  }
  ~fresh_comm() { MPI_Comm_free(&c); }
  fresh_comm(const fresh_comm&) = delete;
  fresh_comm& operator=(const fresh_comm&) = delete;
};

std::vector<int> data(std::size_t n, int salt) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i) * 7 + 100000 * toru::test::rank() + salt;
  return v;
}

TEST(dropin_cost, a_repeated_alltoall_makes_no_collective_but_the_exchange) {
  fresh_comm comm;
  const int P = toru::test::nranks();
  for (int count : {1, 3, 1000}) {
    SCOPED_TRACE("count " + std::to_string(count));
    const auto in = data(static_cast<std::size_t>(count) * P, count);
    std::vector<int> want(in.size()), out(in.size());
    PMPI_Alltoall(in.data(), count, MPI_INT, want.data(), count, MPI_INT, MPI_COMM_WORLD);
    toru::comm::alltoall(in.data(), count, MPI_INT, out.data(), count, MPI_INT, comm.c);  // agrees, plans
    EXPECT_EQ(out, want);
    std::fill(out.begin(), out.end(), 0);
    const auto c =
        mpi_calls_of([&] { toru::comm::alltoall(in.data(), count, MPI_INT, out.data(), count, MPI_INT, comm.c); });
    EXPECT_EQ(c, (std::map<std::string, int>{{"MPI_Alltoall", 1}}));
    EXPECT_EQ(out, want);
    // The C call, in place.
    auto inout = in;
    const auto cc = mpi_calls_of([&] {
      EXPECT_EQ(toru_alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inout.data(), count, MPI_INT, comm.c), TORU_SUCCESS);
    });
    EXPECT_EQ(cc, (std::map<std::string, int>{{"MPI_Alltoall", 1}}));
    EXPECT_EQ(inout, want);
  }
  // Different send and receive types of one size (MPI's conversion), repeated.
  const int count = 4;
  const auto in = data(static_cast<std::size_t>(count) * P, 5);
  std::vector<int> want(in.size()), out(in.size());
  PMPI_Alltoall(in.data(), count, MPI_INT, want.data(), count, MPI_INT, MPI_COMM_WORLD);
  toru::comm::alltoall(in.data(), count / 2, MPI_LONG_LONG, out.data(), count, MPI_INT, comm.c);
  std::fill(out.begin(), out.end(), 0);
  const auto c = mpi_calls_of(
      [&] { toru::comm::alltoall(in.data(), count / 2, MPI_LONG_LONG, out.data(), count, MPI_INT, comm.c); });
  EXPECT_EQ(c, (std::map<std::string, int>{{"MPI_Alltoall", 1}}));
  EXPECT_EQ(out, want);
}

TEST(dropin_cost, a_repeated_alltoallv_reuses_its_plan_with_one_small_allreduce) {
  fresh_comm comm;
  const int P = toru::test::nranks(), me = toru::test::rank();
  // Rank i sends i + j + 1 ints to rank j.
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  for (int j = 0; j < P; ++j) sc[j] = me + j + 1, rc[j] = j + me + 1;
  std::exclusive_scan(sc.begin(), sc.end(), sd.begin(), 0);
  std::exclusive_scan(rc.begin(), rc.end(), rd.begin(), 0);
  const auto in = data(static_cast<std::size_t>(sd.back() + sc.back()), 9);
  std::vector<int> want(static_cast<std::size_t>(rd.back() + rc.back())), out(want.size());
  PMPI_Alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, want.data(), rc.data(), rd.data(), MPI_INT, MPI_COMM_WORLD);
  toru::comm::alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, out.data(), rc.data(), rd.data(), MPI_INT, comm.c);
  EXPECT_EQ(out, want);
  for (int rep = 0; rep < 2; ++rep) {
    std::fill(out.begin(), out.end(), 0);
    const auto c = mpi_calls_of([&] {
      EXPECT_EQ(
          toru_alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, out.data(), rc.data(), rd.data(), MPI_INT, comm.c),
          TORU_SUCCESS);
    });
    EXPECT_EQ(c, (std::map<std::string, int>{{"MPI_Allreduce", 1}, {"MPI_Alltoallv", 1}}));
    EXPECT_EQ(out, want);
  }
}

TEST(dropin_cost, alltoallv_counts_changing_on_some_ranks_only_are_planned_again_on_all) {
  fresh_comm comm;
  const int P = toru::test::nranks(), me = toru::test::rank();
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // From round 1 on, rank 0 sends one more int to rank 1 every other round (so rank 1 receives
    // one more): the other ranks' signatures stay what they were.
    const int extra = P > 1 && round % 2 == 1 ? 1 : 0;
    std::vector<int> sc(P, 2), sd(P), rc(P, 2), rd(P);
    if (me == 0 && P > 1) sc[1] += extra;
    if (me == 1) rc[0] += extra;
    std::exclusive_scan(sc.begin(), sc.end(), sd.begin(), 0);
    std::exclusive_scan(rc.begin(), rc.end(), rd.begin(), 0);
    const auto in = data(static_cast<std::size_t>(sd.back() + sc.back()), round);
    std::vector<int> want(static_cast<std::size_t>(rd.back() + rc.back())), out(want.size(), -1);
    PMPI_Alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, want.data(), rc.data(), rd.data(), MPI_INT,
                   MPI_COMM_WORLD);
    toru::comm::alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, out.data(), rc.data(), rd.data(), MPI_INT, comm.c);
    EXPECT_EQ(out, want);
  }
}

TEST(dropin_cache, a_freed_datatype_handle_reused_for_another_type_gets_its_own_plan) {
  // pairwise places blocks by the type's extent, so a plan kept for the old type would put them wrong.
  setenv("TORU_ALLTOALL_ALGORITHM", "pairwise", 1);
  fresh_comm comm;
  const int P = toru::test::nranks();
  const int count = 3;
  int reused = 0;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  for (int width : {2, 3, 5}) {
    SCOPED_TRACE("width " + std::to_string(width));
    // Freed right before the next type is made, so that MPI can hand out the same handle again.
    const MPI_Datatype old = t;
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    MPI_Type_contiguous(width, MPI_INT, &t);
    MPI_Type_commit(&t);
    reused += t == old ? 1 : 0;
    const auto in = data(static_cast<std::size_t>(count * width * P), width);
    std::vector<int> want(in.size()), out(in.size(), -1);
    PMPI_Alltoall(in.data(), count * width, MPI_INT, want.data(), count * width, MPI_INT, MPI_COMM_WORLD);
    toru::comm::alltoall(in.data(), count, t, out.data(), count, t, comm.c);
    EXPECT_EQ(out, want);
    std::fill(out.begin(), out.end(), -1);
    toru::comm::alltoall(in.data(), count, t, out.data(), count, t, comm.c);  // the cached plan
    EXPECT_EQ(out, want);
  }
  MPI_Type_free(&t);
  unsetenv("TORU_ALLTOALL_ALGORITHM");
  // Open MPI hands a freed datatype's handle to the next type created: the case this test is about.
  int all = 0;
  MPI_Allreduce(&reused, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer quarantines freed memory, so Open MPI hands out no reused handle here: the
  // results above were still checked, but the stale-handle case itself is not exercised.
  if (all == 0) GTEST_SKIP() << "no datatype handle reused under AddressSanitizer (freed memory is quarantined)";
#endif
  EXPECT_GT(all, 0) << "no datatype handle was reused; the test did not exercise a stale handle";
}

TEST(dropin_errors, the_first_call_of_a_signature_fails_on_every_rank_a_later_one_on_the_bad_rank) {
  fresh_comm comm;
  const int P = toru::test::nranks(), me = toru::test::rank();
  std::vector<int> in(4 * static_cast<std::size_t>(P), 1), out(in.size());
  // First call of (4, MPI_INT): agreed, every rank throws.
  EXPECT_THROW(toru::comm::alltoall(me == P - 1 ? nullptr : in.data(), 4, MPI_INT, out.data(), 4, MPI_INT, comm.c),
               toru::error);
  toru::comm::alltoall(in.data(), 4, MPI_INT, out.data(), 4, MPI_INT, comm.c);
  // Now planned: the bad rank takes part with scratch data and throws; the others complete.
  if (me == P - 1)
    EXPECT_THROW(toru::comm::alltoall(nullptr, 4, MPI_INT, out.data(), 4, MPI_INT, comm.c), toru::error);
  else
    EXPECT_NO_THROW(toru::comm::alltoall(in.data(), 4, MPI_INT, out.data(), 4, MPI_INT, comm.c));
}

TEST(dropin_errors, check_mode_agrees_on_every_call) {
  setenv("TORU_CHECK", "1", 1);
  fresh_comm comm;
  const int P = toru::test::nranks(), me = toru::test::rank();
  std::vector<int> in(4 * static_cast<std::size_t>(P), 1), out(in.size());
  toru::comm::alltoall(in.data(), 4, MPI_INT, out.data(), 4, MPI_INT, comm.c);
  unsetenv("TORU_CHECK");
  EXPECT_THROW(toru::comm::alltoall(me == P - 1 ? nullptr : in.data(), 4, MPI_INT, out.data(), 4, MPI_INT, comm.c),
               toru::error);
  if (P > 1) {  // a count that changes on one rank only: an error everywhere, not a hang
    EXPECT_THROW(
        toru::comm::alltoall(in.data(), me == 0 ? 3 : 4, MPI_INT, out.data(), me == 0 ? 3 : 4, MPI_INT, comm.c),
        toru::error);
  }
  // A type of the same size that is new on one rank only.
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  std::vector<int> want(in.size());
  const auto src = data(in.size(), 3);
  PMPI_Alltoall(src.data(), 4, MPI_INT, want.data(), 4, MPI_INT, MPI_COMM_WORLD);
  if (me == 0)
    toru::comm::alltoall(src.data(), 2, pair, out.data(), 2, pair, comm.c);
  else
    toru::comm::alltoall(src.data(), 4, MPI_INT, out.data(), 4, MPI_INT, comm.c);
  EXPECT_EQ(out, want);
  MPI_Type_free(&pair);
}

// ---- threads ----

std::set<int> threads() {
  std::set<int> ids;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
    ids.insert(std::stoi(task.path().filename().string()));
  return ids;
}

// Whether every thread started since `before` may run only on CPUs the calling (main) thread may use.
bool new_threads_inside_my_cpu_set(const std::set<int>& before) {
  cpu_set_t mine;
  sched_getaffinity(0, sizeof mine, &mine);
  for (int id : threads()) {
    cpu_set_t theirs, outside;
    if (before.count(id) || sched_getaffinity(id, sizeof theirs, &theirs) != 0) continue;
    CPU_XOR(&outside, &theirs, &mine);
    CPU_AND(&outside, &outside, &theirs);
    if (CPU_COUNT(&outside) > 0) return false;
  }
  return true;
}

TEST(dropin_threads, a_communicator_starts_no_thread_until_a_plan_needs_one_and_binds_it_inside_the_rank_cpu_set) {
  const int P = toru::test::nranks();
  // As mpirun --bind-to core would: this rank may run on one CPU only.
  cpu_set_t saved, one;
  sched_getaffinity(0, sizeof saved, &saved);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &saved)) {
      CPU_SET(cpu, &one);
      break;
    }
  sched_setaffinity(0, sizeof one, &one);
  const auto before = threads();
  {
    communicator comm(MPI_COMM_WORLD, {.threads = 1});
    EXPECT_EQ(threads(), before);
    alltoall_plan direct(comm, 8, MPI_INT);
    EXPECT_EQ(threads(), before);
    EXPECT_TRUE(new_threads_inside_my_cpu_set(before));
  }
  if (P == 4) {
    // A pipelined indirect plan on a 2x2 torus has a phase A to overlap phase B with: it needs the thread.
    communicator comm(MPI_COMM_WORLD, {.torus = "2x2", .threads = 1});
    EXPECT_EQ(threads(), before);
    alltoall_plan plan(comm, 64, MPI_INT, {.algorithm = alltoall_algorithm::indirect, .chunks = 2});
    EXPECT_EQ(threads().size(), before.size() + 1);
    EXPECT_TRUE(new_threads_inside_my_cpu_set(before));
    const auto in = data(64 * 4, 1);
    std::vector<int> want(in.size()), out(in.size());
    PMPI_Alltoall(in.data(), 64, MPI_INT, want.data(), 64, MPI_INT, MPI_COMM_WORLD);
    plan.execute(in.data(), out.data());
    EXPECT_EQ(out, want);
  }
  sched_setaffinity(0, sizeof saved, &saved);
}

TEST(dropin_threads, the_thread_core_is_the_last_of_this_rank_slice_of_its_cpu_set) {
  using toru::comm::detail::choose_thread_core;
  // Unbound on 8 cores, 2 ranks: slices 0-3 and 4-7.
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(choose_thread_core(all, 0, 2), 3);
  EXPECT_EQ(choose_thread_core(all, 1, 2), 7);
  // More ranks than half the cores: no binding (it would stack threads).
  EXPECT_EQ(choose_thread_core(all, 0, 5), -1);
  // --bind-to core: one core each, the thread stays on the rank's core.
  EXPECT_EQ(choose_thread_core({5}, 0, 1), -1);
  // --bind-to socket: 3 ranks share cores 8-15 (7 cores given): slices of 2, last cores 9, 11, 13.
  const std::vector<int> socket = {8, 9, 10, 11, 12, 13, 15};
  EXPECT_EQ(choose_thread_core(socket, 0, 3), 9);
  EXPECT_EQ(choose_thread_core(socket, 2, 3), 13);
  EXPECT_EQ(choose_thread_core({}, 0, 1), -1);
}

// ---- counts beyond int, with the limit lowered so that small buffers take the large path ----

TEST(large_count, blocks_beyond_the_int_limit_travel_as_derived_datatypes) {
  const int P = toru::test::nranks();
  struct restore {
    ~restore() { toru::comm::detail::set_int_limit_for_testing(0); }
  } guard;
  toru::comm::detail::set_int_limit_for_testing(5);
  // A strided element (an int every other int) checks that blocks are placed by extent.
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  communicator comm(MPI_COMM_WORLD);
  for (int count : {2, 7, 11, 15}) {  // below, above with a remainder, and whole pieces of 5
    for (MPI_Datatype type : {MPI_INT, strided}) {
      const int stride = type == MPI_INT ? 1 : 2;
      SCOPED_TRACE("count " + std::to_string(count) + " stride " + std::to_string(stride));
      const auto in = data(static_cast<std::size_t>(count * P * stride), count);
      std::vector<int> want(in.size(), -1);
      PMPI_Alltoall(in.data(), count, type, want.data(), count, type, MPI_COMM_WORLD);
      for (auto algorithm : {alltoall_algorithm::automatic, alltoall_algorithm::direct, alltoall_algorithm::pairwise}) {
        alltoall_plan plan(comm, static_cast<std::size_t>(count), type, {.algorithm = algorithm});
        EXPECT_EQ(plan.count(), static_cast<std::size_t>(count));
        std::vector<int> out(in.size(), -1);
        plan.execute(in.data(), out.data());
        EXPECT_EQ(out, want);
      }
      if (type == MPI_INT) {  // in place (Open MPI's in-place all-to-all wants its element contiguous)
        auto inout = in;
        toru::comm::alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inout.data(), count, type, MPI_COMM_WORLD);
        EXPECT_EQ(inout, want);
      }
    }
  }
  MPI_Type_free(&strided);
}

}  // namespace
