// SPDX-License-Identifier: BSD-3-Clause
// toru's internal events: what comm and fft emit, seen through a sink.
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/core/events.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

struct seen {
  int kind;
  std::string name, detail;
  std::uint64_t bytes;
  double value;
};
std::mutex mu;
std::vector<seen> events;

void sink(int kind, const char* name, const char* detail, std::uint64_t bytes, double value) noexcept {
  std::lock_guard lock(mu);
  events.push_back({kind, name, detail, bytes, value});
}

struct capture {
  capture() {
    events.clear();
    toru::events::set_sink(&sink);
  }
  ~capture() { toru::events::set_sink(nullptr); }
};

TEST(TuneEvents, NoSinkNoEvents) {
  toru::events::set_sink(nullptr);
  EXPECT_FALSE(toru::events::enabled());
  events.clear();
  { toru::events::scope s("test.phase", 10); }
  EXPECT_TRUE(events.empty());
}

TEST(TuneEvents, ScopeAndMarkReachTheSink) {
  capture c;
  {
    toru::events::scope s("test.phase", 42, "d", 1.5);
    toru::events::mark("test.mark", 7);
  }
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, 0);
  EXPECT_EQ(events[0].name, "test.phase");
  EXPECT_EQ(events[0].bytes, 42u);
  EXPECT_EQ(events[0].detail, "d");
  EXPECT_EQ(events[1].kind, 2);
  EXPECT_EQ(events[2].kind, 1);
  EXPECT_EQ(events[2].name, "test.phase");
}

TEST(TuneEvents, AlltoallReportsBytesAlgorithmAndBound) {
  const int P = toru::test::nranks();
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const std::size_t count = 1000;
  toru::comm::alltoall_plan plan(comm, count, MPI_DOUBLE, {.algorithm = toru::comm::alltoall_algorithm::pairwise});
  std::vector<double> in(count * static_cast<std::size_t>(P), 1.0), out(in.size());
  capture c;
  plan.execute(in.data(), out.data());
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().name, "comm.alltoall");
  EXPECT_EQ(events.front().kind, 0);
  EXPECT_EQ(events.front().detail, "pairwise");
  EXPECT_EQ(events.front().bytes, count * sizeof(double) * static_cast<std::size_t>(P));
  if (P > 1) {
    EXPECT_GT(events.front().value, 0.0);  // T_min on the communicator's torus
  }
  EXPECT_EQ(events.back().name, "comm.alltoall");
  EXPECT_EQ(events.back().kind, 1);
}

TEST(TuneEvents, FftStagesNest) {
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {12, 10, 7}, {.decomp = toru::fft::decomposition::slab});
  std::vector<std::complex<double>> a(plan.alloc_size(), 1.0), b(plan.alloc_size());
  capture c;
  plan.forward(a.data(), b.data());
  std::map<std::string, int> depth, count;
  int level = 0, max_level = 0;
  for (const auto& e : events) {
    if (e.kind == 0) max_level = std::max(max_level, ++level), ++count[e.name];
    if (e.kind == 1) --level;
    EXPECT_GE(level, 0);
  }
  EXPECT_EQ(level, 0);
  EXPECT_EQ(count["fft.execute"], 1);
  EXPECT_GE(count["fft.local_fft"], 1);
  EXPECT_GE(count["fft.transpose"], 1);
  EXPECT_GE(max_level, 2);
  EXPECT_EQ(events.front().detail, "forward");
}

}  // namespace
