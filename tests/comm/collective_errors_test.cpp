// SPDX-License-Identifier: BSD-3-Clause
// The collective-error harness: for every public comm entry point (C and C++), one argument is
// corrupted on exactly one rank (the first, the last and a middle rank in turn) and every rank must
// come back with the same error code and the same message, within a time limit. A watchdog thread
// turns a hang (a rank left waiting in a collective) into a failure message and an exit instead of a
// stuck suite.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collective_errors.hpp"
#include "mpi_test.hpp"
#include "toru/comm.h"
#include "toru/comm/alltoall.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/comm/wisdom.hpp"
#include "toru/core/error.hpp"

namespace {

using toru::comm::alltoall_algorithm;

using toru::test::from_c;
using toru::test::from_cpp;
using toru::test::outcome;

// Runs `call(comm, corrupt)` on every rank of a fresh duplicate of MPI_COMM_WORLD (corrupt on rank
// `victim`, on none for -2, on every rank for -1) and checks that every rank got `expected` (0:
// success) with one message (or, with same_message false, with a message naming `mentions`).
void run_case(const std::string& name, int expected, const std::function<outcome(MPI_Comm, bool)>& call, int victim,
              bool same_message = true, const std::string& mentions = "") {
  const std::string what =
      victim < 0 ? name + " (every rank)" : name + " (corrupted on rank " + std::to_string(victim) + ")";
  auto dog = std::make_unique<toru::test::watchdog>(what);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int me = toru::test::rank();
  const outcome got = call(comm, victim == -1 || victim == me);
  // Compare on MPI_COMM_WORLD: a call that left a collective pending on `comm` cannot match this.
  const int P = toru::test::nranks();
  std::vector<int> codes(static_cast<std::size_t>(P));
  MPI_Allgather(&got.code, 1, MPI_INT, codes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int len = static_cast<int>(got.message.size()), max_len = 0;
  MPI_Allreduce(&len, &max_len, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::string mine = got.message;
  mine.resize(static_cast<std::size_t>(max_len) + 1, '\0');
  std::string first = mine;
  MPI_Bcast(first.data(), max_len + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = mine == first ? 1 : 0, all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Comm_free(&comm);
  dog.reset();

  for (int r = 0; r < P; ++r)
    EXPECT_EQ(codes[static_cast<std::size_t>(r)], expected)
        << what << ": rank " << r << " returned code " << codes[static_cast<std::size_t>(r)] << " ("
        << toru_error_string(static_cast<toru_result>(codes[static_cast<std::size_t>(r)])) << ")"
        << (r == me ? ": " + got.message : "");
  if (same_message)
    EXPECT_EQ(all_same, 1) << what << ": messages differ across ranks; this rank's: " << got.message;
  else
    EXPECT_NE(got.message.find(mentions), std::string::npos) << what << ": " << got.message;
}

// Victims: the first, the last and a middle rank.
std::vector<int> victims() {
  const int P = toru::test::nranks();
  std::set<int> v{0, P - 1, P / 2};
  return {v.begin(), v.end()};
}

struct test_case {
  std::string name;
  int expected;  // the error every rank must return
  std::function<outcome(MPI_Comm, bool)> call;
};

// Each case first runs uncorrupted on every rank (must succeed, so the corruption is the only
// cause of the error), then corrupted on each victim in turn.
void run_one_rank_cases(const std::vector<test_case>& cases) {
  for (const auto& c : cases) {
    run_case(c.name, 0, c.call, -2);
    for (int v : victims()) run_case(c.name, c.expected, c.call, v);
  }
}

constexpr int invalid = TORU_ERROR_INVALID_ARGUMENT;
constexpr int mismatch = TORU_ERROR_MISMATCH;

int nranks(MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

// An environment variable set on the corrupted rank(s) only, for the duration of one call.
struct scoped_env {
  scoped_env(const char* name, const char* value, bool set) : name_(name), set_(set) {
    if (set_) setenv(name, value, 1);
  }
  ~scoped_env() {
    if (set_) unsetenv(name_);
  }
  const char* name_;
  bool set_;
};

// ---- C: plans ----

outcome c_plan(MPI_Comm comm, std::size_t count, MPI_Datatype type, const toru_alltoall_options* opts, bool null_out) {
  toru_alltoall_plan plan = nullptr;
  const toru_result r = toru_alltoall_plan_create(comm, count, type, opts, null_out ? nullptr : &plan);
  outcome o = from_c(r);
  toru_alltoall_plan_destroy(plan);
  return o;
}

toru_alltoall_options c_opts(toru_alltoall_algorithm a = TORU_ALLTOALL_AUTO, int chunks = 0) {
  auto o = toru_alltoall_options_default();
  o.algorithm = a;
  o.chunks = chunks;
  return o;
}

TEST(collective_errors, c_plan_create) {
  run_one_rank_cases({
      {"toru_alltoall_plan_create count", mismatch,
       [](MPI_Comm comm, bool bad) { return c_plan(comm, bad ? 5 : 4, MPI_INT, nullptr, false); }},
      {"toru_alltoall_plan_create type size", mismatch,
       [](MPI_Comm comm, bool bad) { return c_plan(comm, 4, bad ? MPI_DOUBLE : MPI_INT, nullptr, false); }},
      {"toru_alltoall_plan_create type null", invalid,
       [](MPI_Comm comm, bool bad) { return c_plan(comm, 4, bad ? MPI_DATATYPE_NULL : MPI_INT, nullptr, false); }},
      {"toru_alltoall_plan_create plan pointer", invalid,
       [](MPI_Comm comm, bool bad) { return c_plan(comm, 4, MPI_INT, nullptr, bad); }},
      {"toru_alltoall_plan_create options->algorithm differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         const auto o = c_opts(bad ? TORU_ALLTOALL_PAIRWISE : TORU_ALLTOALL_DIRECT);
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->algorithm out of range", invalid,
       [](MPI_Comm comm, bool bad) {
         const auto o = c_opts(bad ? static_cast<toru_alltoall_algorithm>(42) : TORU_ALLTOALL_DIRECT);
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->chunks negative", invalid,
       [](MPI_Comm comm, bool bad) {
         const auto o = c_opts(TORU_ALLTOALL_INDIRECT, bad ? -1 : 2);
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->chunks differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         const auto o = c_opts(TORU_ALLTOALL_INDIRECT, bad ? 3 : 2);
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->measure differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         auto o = c_opts();
         o.measure = bad ? 1 : 0;
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options NULL vs given", mismatch,
       [](MPI_Comm comm, bool bad) {
         const auto o = c_opts(TORU_ALLTOALL_PAIRWISE);
         return c_plan(comm, 4, MPI_INT, bad ? nullptr : &o, false);
       }},
      {"toru_alltoall_plan_create options->torus malformed", invalid,
       [](MPI_Comm comm, bool bad) {
         auto o = c_opts();
         const std::string spec = std::to_string(nranks(comm));
         o.torus = bad ? "x?" : spec.c_str();
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->torus differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         auto o = c_opts();
         const std::string spec = (bad ? "1x" : "") + std::to_string(nranks(comm));
         o.torus = spec.c_str();
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->order differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         auto o = c_opts(TORU_ALLTOALL_INDIRECT);
         const std::string spec = "1x" + std::to_string(nranks(comm));
         o.torus = spec.c_str();
         o.order = bad ? "10" : "01";
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->size 0 (never initialised) on one rank", invalid,
       [](MPI_Comm comm, bool bad) {
         auto o = c_opts();
         if (bad) o.size = 0;
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create options->size beyond the library's struct on one rank", invalid,
       [](MPI_Comm comm, bool bad) {
         auto o = c_opts();
         if (bad) o.size = sizeof o + 8;
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create TORU_ALLTOALL_ALGORITHM on one rank", mismatch,
       [](MPI_Comm comm, bool bad) {
         scoped_env env("TORU_ALLTOALL_ALGORITHM", "pairwise", bad);
         return c_plan(comm, 4, MPI_INT, nullptr, false);
       }},
      {"toru_alltoall_plan_create TORU_ALLTOALL_ALGORITHM malformed", invalid,
       [](MPI_Comm comm, bool bad) {
         scoped_env env("TORU_ALLTOALL_ALGORITHM", "fastest", bad);
         return c_plan(comm, 4, MPI_INT, nullptr, false);
       }},
      {"toru_alltoall_plan_create TORU_ALLTOALL_CHUNKS on one rank", mismatch,
       [](MPI_Comm comm, bool bad) {
         scoped_env env("TORU_ALLTOALL_CHUNKS", "3", bad);
         const auto o = c_opts(TORU_ALLTOALL_INDIRECT);
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create TORU_ALLTOALL_CHUNKS malformed", invalid,
       [](MPI_Comm comm, bool bad) {
         scoped_env env("TORU_ALLTOALL_CHUNKS", "3x", bad);
         const auto o = c_opts(TORU_ALLTOALL_INDIRECT);
         return c_plan(comm, 4, MPI_INT, &o, false);
       }},
      {"toru_alltoall_plan_create TORU_TORUS on one rank", mismatch,
       [](MPI_Comm comm, bool bad) {
         const std::string spec = "1x" + std::to_string(nranks(comm));
         scoped_env env("TORU_TORUS", spec.c_str(), bad);
         return c_plan(comm, 4, MPI_INT, nullptr, false);
       }},
  });
}

struct v_args {
  std::vector<int> sc, sd, rc, rd;
  explicit v_args(int P) : sc(P, 2), sd(P), rc(P, 2), rd(P) {
    for (int j = 0; j < P; ++j) sd[j] = rd[j] = 2 * j;
  }
};

outcome c_vplan(MPI_Comm comm, const v_args& a, const int* sc, MPI_Datatype type, const toru_alltoall_options* o,
                bool null_out) {
  toru_alltoall_plan plan = nullptr;
  const toru_result r =
      toru_alltoallv_plan_create(comm, sc, a.sd.data(), a.rc.data(), a.rd.data(), type, o, null_out ? nullptr : &plan);
  outcome out = from_c(r);
  toru_alltoall_plan_destroy(plan);
  return out;
}

TEST(collective_errors, c_vplan_create) {
  run_one_rank_cases({
      {"toru_alltoallv_plan_create send_counts NULL", invalid,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         return c_vplan(comm, a, bad ? nullptr : a.sc.data(), MPI_INT, nullptr, false);
       }},
      {"toru_alltoallv_plan_create send_counts negative", invalid,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         if (bad) a.sc[0] = -1;
         return c_vplan(comm, a, a.sc.data(), MPI_INT, nullptr, false);
       }},
      {"toru_alltoallv_plan_create send count unmatched by the peer", mismatch,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         if (bad) a.sc[0] = 1;
         return c_vplan(comm, a, a.sc.data(), MPI_INT, nullptr, false);
       }},
      {"toru_alltoallv_plan_create type size", mismatch,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         return c_vplan(comm, a, a.sc.data(), bad ? MPI_SHORT : MPI_INT, nullptr, false);
       }},
      {"toru_alltoallv_plan_create plan pointer", invalid,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         return c_vplan(comm, a, a.sc.data(), MPI_INT, nullptr, bad);
       }},
      {"toru_alltoallv_plan_create options->algorithm differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         const auto o = c_opts(bad ? TORU_ALLTOALL_INDIRECT : TORU_ALLTOALL_PAIRWISE);
         return c_vplan(comm, a, a.sc.data(), MPI_INT, &o, false);
       }},
  });
}

// ---- C: drop-in calls and wisdom ----

TEST(collective_errors, c_drop_in) {
  run_one_rank_cases({
      {"toru_alltoall recvcount", mismatch,
       [](MPI_Comm comm, bool bad) {
         const int P = nranks(comm), n = bad ? 3 : 2;
         std::vector<int> in(3 * P), out(3 * P);
         return from_c(toru_alltoall(in.data(), n, MPI_INT, out.data(), n, MPI_INT, comm));
       }},
      {"toru_alltoall recvbuf NULL", invalid,
       [](MPI_Comm comm, bool bad) {
         const int P = nranks(comm);
         std::vector<int> in(2 * P), out(2 * P);
         return from_c(toru_alltoall(in.data(), 2, MPI_INT, bad ? nullptr : out.data(), 2, MPI_INT, comm));
       }},
      {"toru_alltoall sendcount * size(sendtype)", invalid,
       [](MPI_Comm comm, bool bad) {
         const int P = nranks(comm);
         std::vector<int> in(4 * P), out(2 * P);
         return from_c(toru_alltoall(in.data(), bad ? 3 : 2, MPI_INT, out.data(), 2, MPI_INT, comm));
       }},
      {"toru_alltoall recvtype null", invalid,
       [](MPI_Comm comm, bool bad) {
         const int P = nranks(comm);
         std::vector<int> in(2 * P), out(2 * P);
         return from_c(toru_alltoall(in.data(), 2, MPI_INT, out.data(), 2, bad ? MPI_DATATYPE_NULL : MPI_INT, comm));
       }},
      {"toru_alltoallv recvcounts NULL", invalid,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         std::vector<int> in(2 * a.sc.size()), out(in.size());
         return from_c(toru_alltoallv(in.data(), a.sc.data(), a.sd.data(), MPI_INT, out.data(),
                                      bad ? nullptr : a.rc.data(), a.rd.data(), MPI_INT, comm));
       }},
  });
}

TEST(collective_errors, c_wisdom) {
  const std::string path = "/tmp/toru_collective_errors_wisdom_" + std::to_string(toru::test::nranks()) + ".json";
  run_one_rank_cases({
      {"toru_alltoall_wisdom_save path NULL", invalid,
       [&](MPI_Comm comm, bool bad) { return from_c(toru_alltoall_wisdom_save(comm, bad ? nullptr : path.c_str())); }},
      {"toru_alltoall_wisdom_save path differs", mismatch,
       [&](MPI_Comm comm, bool bad) {
         const std::string p = bad ? path + ".other" : path;
         return from_c(toru_alltoall_wisdom_save(comm, p.c_str()));
       }},
      {"toru_alltoall_wisdom_load path NULL", invalid,
       [&](MPI_Comm comm, bool bad) { return from_c(toru_alltoall_wisdom_load(comm, bad ? nullptr : path.c_str())); }},
  });
  // Every rank: a missing file is an error, never a silent success.
  run_case(
      "toru_alltoall_wisdom_load missing file", TORU_ERROR_IO,
      [](MPI_Comm comm, bool) { return from_c(toru_alltoall_wisdom_load(comm, "/nonexistent/toru-wisdom.json")); }, -1);
  if (toru::test::rank() == 0)
    for (const std::string& p : {path, path + ".other"}) std::remove(p.c_str());
}

// ---- communicators that cannot carry an all-to-all (every rank passes them) ----

TEST(collective_errors, null_and_inter_communicators) {
  const int P = toru::test::nranks();
  std::vector<int> buf(2 * static_cast<std::size_t>(P));
  // No communicator to agree over: every rank refuses it locally, naming its own rank.
  auto refused = [&](MPI_Comm bad_comm, const char* label) {
    std::vector<test_case> cases = {
        {std::string("toru_alltoall_plan_create ") + label, invalid,
         [&](MPI_Comm, bool) { return c_plan(bad_comm, 2, MPI_INT, nullptr, false); }},
        {std::string("toru_alltoall ") + label, invalid,
         [&](MPI_Comm, bool) {
           return from_c(toru_alltoall(buf.data(), 1, MPI_INT, buf.data() + P, 1, MPI_INT, bad_comm));
         }},
        {std::string("toru_alltoall_wisdom_load ") + label, invalid,
         [&](MPI_Comm, bool) { return from_c(toru_alltoall_wisdom_load(bad_comm, "/nonexistent/w.json")); }},
        {std::string("toru::comm::communicator ") + label, invalid,
         [&](MPI_Comm, bool) { return from_cpp([&] { toru::comm::communicator c(bad_comm); }); }},
    };
    for (const auto& c : cases) run_case(c.name, c.expected, c.call, -1, false, label);
  };
  refused(MPI_COMM_NULL, "MPI_COMM_NULL");
  if (P < 2) return;
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  const int me = toru::test::rank(), lower = me < P / 2 ? 1 : 0;
  MPI_Comm_split(MPI_COMM_WORLD, lower, me, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower ? P / 2 : 0, 7, &inter);
  refused(inter, "intercommunicator");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

// ---- C++ ----

TEST(collective_errors, cpp_communicator) {
  run_one_rank_cases({
      {"communicator options.threads", invalid,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] { toru::comm::communicator c(comm, {.threads = bad ? 7 : 0}); });
       }},
      {"communicator options.bind_threads differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] { toru::comm::communicator c(comm, {.threads = 0, .bind_threads = bad}); });
       }},
      {"communicator options.torus differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm, {.torus = (bad ? "1x" : "") + std::to_string(nranks(comm)), .threads = 0});
         });
       }},
      {"communicator TORU_TORUS malformed on one rank", invalid,
       [](MPI_Comm comm, bool bad) {
         scoped_env env("TORU_TORUS", "2x?", bad);
         return from_cpp([&] { toru::comm::communicator c(comm, {.threads = 0}); });
       }},
      {"communicator(comm, parent) options.torus differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           const toru::comm::communicator parent(comm, {.torus = std::to_string(nranks(comm)), .threads = 0});
           toru::comm::communicator c(comm, parent,
                                      {.torus = bad ? "1x" + std::to_string(nranks(comm)) : "", .threads = 0});
         });
       }},
      {"communicator options.order differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm,
                                      {.torus = std::to_string(nranks(comm)), .order = bad ? "Q" : "0", .threads = 0});
         });
       }},
  });
}

TEST(collective_errors, cpp_plans) {
  run_one_rank_cases({
      {"alltoall_plan count", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm, {.threads = 0});
           toru::comm::alltoall_plan p(c, bad ? 3 : 2, MPI_INT);
         });
       }},
      {"alltoall_plan options.algorithm differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm, {.threads = 0});
           toru::comm::alltoall_plan p(c, 2, MPI_INT,
                                       {.algorithm = bad ? alltoall_algorithm::bruck : alltoall_algorithm::pairwise});
         });
       }},
      {"alltoall_plan options.measure differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm, {.threads = 0});
           toru::comm::alltoall_plan p(c, 2, MPI_INT, {.measure = bad});
         });
       }},
      {"alltoallv_plan span size", invalid,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm, {.threads = 0});
           v_args a(nranks(comm));
           const std::span<const int> sc(a.sc.data(), bad ? a.sc.size() - 1 : a.sc.size());
           toru::comm::alltoallv_plan p(c, sc, a.sd, a.rc, a.rd, MPI_INT);
         });
       }},
      {"alltoallv_plan options.chunks differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         return from_cpp([&] {
           toru::comm::communicator c(comm, {.threads = 0});
           v_args a(nranks(comm));
           toru::comm::alltoallv_plan p(c, a.sc, a.sd, a.rc, a.rd, MPI_INT,
                                        {.algorithm = alltoall_algorithm::direct, .chunks = bad ? 2 : 1});
         });
       }},
      {"toru::comm::alltoall recvcount", mismatch,
       [](MPI_Comm comm, bool bad) {
         const int P = nranks(comm), n = bad ? 3 : 2;
         std::vector<int> in(3 * P), out(3 * P);
         return from_cpp([&] { toru::comm::alltoall(in.data(), n, MPI_INT, out.data(), n, MPI_INT, comm); });
       }},
      {"toru::comm::alltoallv recvcounts NULL", invalid,
       [](MPI_Comm comm, bool bad) {
         v_args a(nranks(comm));
         std::vector<int> in(2 * a.sc.size()), out(in.size());
         return from_cpp([&] {
           toru::comm::alltoallv(in.data(), a.sc.data(), a.sd.data(), MPI_INT, out.data(), bad ? nullptr : a.rc.data(),
                                 a.rd.data(), MPI_INT, comm);
         });
       }},
  });
}

TEST(collective_errors, cpp_wisdom) {
  run_one_rank_cases({
      {"save_wisdom path differs", mismatch,
       [](MPI_Comm comm, bool bad) {
         const std::string p = "/tmp/toru_collective_errors_cpp_" + std::to_string(nranks(comm)) + (bad ? "b" : "a");
         return from_cpp([&] { toru::comm::save_wisdom(comm, p); });
       }},
  });
  run_case(
      "load_wisdom missing file", TORU_ERROR_IO,
      [](MPI_Comm comm, bool) {
        return from_cpp([&] { toru::comm::load_wisdom(comm, "/nonexistent/toru-wisdom.json"); });
      },
      -1);
  if (toru::test::rank() == 0)
    for (const char* s : {"a", "b"})
      std::remove(("/tmp/toru_collective_errors_cpp_" + std::to_string(toru::test::nranks()) + s).c_str());
}

}  // namespace
