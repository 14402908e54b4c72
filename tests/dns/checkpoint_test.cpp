// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints: a restart continues bit for bit; a checkpoint written on one rank count and
// decomposition reads back bit for bit on another; a missing, foreign, truncated, corrupted or
// wrong-size file gives the same error on every rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "dns/checkpoint.hpp"
#include "dns/initial.hpp"
#include "dns/solver.hpp"
#include "dns_test_util.hpp"
#include "toru/core/error.hpp"

namespace toru::dns {
namespace {

using test::temp_dir;
using test::world_rank;

solver_config config(transform_options opts = {}) { return {.n = 16, .nu = 0.01, .method = scheme::rk3, .fft = opts}; }

void steps(solver& s, int k) {
  for (int i = 0; i < k; ++i) s.advance(s.cfl_dt(s.prepare(), 0.5));
}

checkpoint_header header_of(const solver& s) {
  return {.t = s.t(), .step = s.step(), .dt = s.last_dt(), .re = 100, .nu = s.config().nu, .scheme = "rk3"};
}

bool same_bits(const vector_field& a, const vector_field& b) {
  int same = 1, all = 0;
  for (int c = 0; c < 3; ++c) same &= std::memcmp(a[c].data(), b[c].data(), a[c].size() * sizeof(cpx)) == 0 ? 1 : 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

TEST(DnsCheckpoint, RestartIsBitIdentical) {
  const std::string dir = temp_dir();
  solver a(MPI_COMM_WORLD, config());
  random_isotropic(a.grid(), a.transformer(), 3, 5, a.u());
  solver b(MPI_COMM_WORLD, config());
  b.u() = a.u();
  steps(a, 6);
  steps(b, 3);
  write_checkpoint(b.grid(), b.u(), header_of(b), dir + "/c.bin");
  solver c(MPI_COMM_WORLD, config());
  const auto h = read_checkpoint(c.grid(), c.u(), dir + "/c.bin");
  EXPECT_EQ(h.step, 3);
  EXPECT_EQ(h.t, b.t());
  EXPECT_EQ(h.dt, b.last_dt());
  c.set_time(h.t, h.step, h.dt);
  steps(c, 3);
  EXPECT_TRUE(same_bits(a.u(), c.u()));
  EXPECT_EQ(a.t(), c.t());
  EXPECT_EQ(a.grid().digest(a.u()), c.grid().digest(c.u()));
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

TEST(DnsCheckpoint, ReadsBackOnAnyRankCountAndDecomposition) {
  const std::string dir = temp_dir();
  const auto cases = test::fft_cases();
  solver w(MPI_COMM_WORLD, config(cases[1].opts));  // slab
  random_isotropic(w.grid(), w.transformer(), 3, 9, w.u());
  steps(w, 2);
  const std::uint64_t written = w.grid().digest(w.u());
  write_checkpoint(w.grid(), w.u(), header_of(w), dir + "/c.bin");
  const auto global = test::gather_natural(w.grid(), w.u());
  for (const auto& c : cases) {  // every decomposition of every rank count reads the same bits
    SCOPED_TRACE(c.name);
    solver r(MPI_COMM_WORLD, config(c.opts));
    read_checkpoint(r.grid(), r.u(), dir + "/c.bin");
    EXPECT_EQ(r.grid().digest(r.u()), written);
    EXPECT_EQ(test::rel_diff(test::gather_natural(r.grid(), r.u()), global), 0.0);
  }
  if (world_rank() == 0) {  // and one rank alone
    solver r(MPI_COMM_SELF, config());
    read_checkpoint(r.grid(), r.u(), dir + "/c.bin");
    EXPECT_EQ(r.grid().digest(r.u()), written);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

// The message of the error f throws, checked to be the same on every rank.
std::string collective_error(const std::function<void()>& f, errc want) {
  std::string message;
  errc code = errc::success;
  try {
    f();
  } catch (const toru::error& e) {
    message = e.message();
    code = e.code();
  }
  EXPECT_EQ(code, want) << message;
  std::string root = message;
  int len = static_cast<int>(root.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  root.resize(static_cast<std::size_t>(len));
  MPI_Bcast(root.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(message, root) << "ranks disagree on the error";
  return message;
}

TEST(DnsCheckpoint, BadFilesGiveTheSameErrorOnEveryRank) {
  const std::string dir = temp_dir();
  solver s(MPI_COMM_WORLD, config());
  random_isotropic(s.grid(), s.transformer(), 3, 1, s.u());
  write_checkpoint(s.grid(), s.u(), header_of(s), dir + "/good.bin");
  const auto before = s.grid().digest(s.u());

  auto msg = collective_error([&] { read_checkpoint(s.grid(), s.u(), dir + "/missing.bin"); }, errc::io);
  EXPECT_NE(msg.find("no checkpoint file"), std::string::npos) << msg;

  solver other(MPI_COMM_WORLD, {.n = 18, .nu = 0.01});
  msg = collective_error([&] { read_checkpoint(other.grid(), other.u(), dir + "/good.bin"); }, errc::mismatch);
  EXPECT_NE(msg.find("holds a 16^3 field, expected 18^3"), std::string::npos) << msg;

  if (world_rank() == 0) {
    namespace fs = std::filesystem;
    fs::copy_file(dir + "/good.bin", dir + "/corrupt.bin");
    std::fstream f(dir + "/corrupt.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(checkpoint_header_bytes + 16 * 100 + 3);
    f.put('\x5a');
    f.close();
    fs::copy_file(dir + "/good.bin", dir + "/short.bin");
    fs::resize_file(dir + "/short.bin", fs::file_size(dir + "/good.bin") - 16);
    std::ofstream(dir + "/foreign.bin") << std::string(5000, 'x');
  }
  MPI_Barrier(MPI_COMM_WORLD);
  msg = collective_error([&] { read_checkpoint(s.grid(), s.u(), dir + "/corrupt.bin"); }, errc::io);
  EXPECT_NE(msg.find("corrupted"), std::string::npos) << msg;
  msg = collective_error([&] { read_checkpoint(s.grid(), s.u(), dir + "/short.bin"); }, errc::io);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  msg = collective_error([&] { read_checkpoint(s.grid(), s.u(), dir + "/foreign.bin"); }, errc::io);
  EXPECT_NE(msg.find("not a toru-dns checkpoint"), std::string::npos) << msg;
  // A refused file leaves the field alone.
  EXPECT_EQ(s.grid().digest(s.u()), before);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace toru::dns
