// SPDX-License-Identifier: BSD-3-Clause
// The parallel replay (each rank its own events) against the serial delay analysis of every rank's
// events (rootcause_test.cpp checks that one on traces with known answers): simulated programs
// with imbalance, rings of blocking, synchronous and nonblocking messages, probing, collectives on
// the world and on a sub-communicator; and the site statistics on a trace whose waits are known.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "mpi_test.hpp"
#include "replay.hpp"

namespace toru::tune::shim {
namespace {

constexpr std::uint64_t world_key = 11, even_key = 22;

// A program's trace, simulated: every rank's clock advances through compute and calls; a message
// arrives at its send's entry plus a latency; a collective ends when its last member arrives.
struct sim {
  struct rank_state {
    double t = 0, compute = 0, last_exit = 0;
    std::vector<event> ev;
    std::map<std::tuple<int, int, int, std::uint64_t>, std::uint32_t> seqs;
  };
  std::vector<rank_state> r;
  std::uint32_t group = 1;
  static constexpr double lat = 1e-5;

  explicit sim(int n) : r(static_cast<std::size_t>(n)) {}
  rank_state& at(int i) { return r[static_cast<std::size_t>(i)]; }
  int n() const { return static_cast<int>(r.size()); }

  event& call(int i, ev_type type, fn func, int site, double t0, double t1) {
    rank_state& s = at(i);
    s.compute += t0 - s.last_exit;
    s.last_exit = t1;
    s.t = t1;
    s.ev.push_back(
        event{.t0 = t0, .t1 = t1, .tpost = t0, .compute = s.compute, .site = site, .type = type, .func = func});
    return s.ev.back();
  }
  std::uint32_t next(int i, int kind, int peer, int tag, std::uint64_t key) {
    return at(i).seqs[{kind, peer, tag, key}]++;
  }
  event& send(int i, int dst, int site, double t1, fn func = f_send) {
    event& e = call(i, ev_type::send, func, site, at(i).t, t1);
    e.peer = dst;
    e.key = world_key;
    e.seq = next(i, 0, dst, 0, world_key);
    return e;
  }
  event& recv(int i, int src, int site, double t0, double t1, double tpost, std::uint32_t grp = 0) {
    event& e = call(i, ev_type::recv, f_recv, site, t0, t1);
    e.peer = src;
    e.key = world_key;
    e.tpost = tpost;
    e.group = grp;
    e.seq = next(i, 1, src, 0, world_key);
    return e;
  }
  void compute(std::mt19937& g, double scale, const std::vector<double>& weight) {
    std::uniform_real_distribution<double> u(0.5, 1.5);
    for (int i = 0; i < n(); ++i) at(i).t += scale * weight[static_cast<std::size_t>(i)] * u(g);
  }
  // Each rank sends to the right, then receives from the left (eager sends).
  void ring(int site) {
    std::vector<double> sent(r.size());
    for (int i = 0; i < n(); ++i) {
      sent[static_cast<std::size_t>(i)] = at(i).t;
      send(i, (i + 1) % n(), site, at(i).t + 1e-6);
    }
    for (int i = 0; i < n(); ++i) {
      const int left = (i + n() - 1) % n();
      const double t0 = at(i).t, arrive = sent[static_cast<std::size_t>(left)] + lat;
      recv(i, left, site + 1, t0, std::max(t0, arrive) + 1e-6, t0);
    }
  }
  // Pairs (2k, 2k+1) exchange with synchronous sends: the even rank sends first, the odd receives
  // first, so a send waits for its receive to be posted (late receiver).
  void pairs(int site) {
    for (int i = 0; i + 1 < n(); i += 2) {
      const int j = i + 1;
      const double s0 = at(i).t, post = at(j).t;
      send(i, j, site, std::max(s0, post) + lat, f_ssend);
      recv(j, i, site + 1, post, std::max(s0, post) + lat, post);
      const double s1 = at(j).t, post2 = at(i).t;
      send(j, i, site + 2, std::max(s1, post2) + lat, f_ssend);
      recv(i, j, site + 3, post2, std::max(s1, post2) + lat, post2);
    }
  }
  // Irecv from both neighbours, send to both, a little compute, Waitall (one group per rank).
  void halo(std::mt19937& g, int site) {
    const int nn = n();
    std::vector<double> post(r.size()), sent_r(r.size()), sent_l(r.size());
    for (int i = 0; i < nn; ++i) {
      post[static_cast<std::size_t>(i)] = at(i).t;
      call(i, ev_type::other_mpi, f_irecv, site, at(i).t, at(i).t + 1e-6);
      sent_r[static_cast<std::size_t>(i)] = at(i).t;
      send(i, (i + 1) % nn, site + 1, at(i).t + 1e-6, f_isend);
      sent_l[static_cast<std::size_t>(i)] = at(i).t;
      send(i, (i + nn - 1) % nn, site + 1, at(i).t + 1e-6, f_isend);
    }
    std::uniform_real_distribution<double> u(0, 2e-3);
    for (int i = 0; i < nn; ++i) {
      at(i).t += u(g);
      const int left = (i + nn - 1) % nn, right = (i + 1) % nn;
      const double t0 = at(i).t;
      const double from_left = sent_r[static_cast<std::size_t>(left)] + lat;
      const double from_right = sent_l[static_cast<std::size_t>(right)] + lat;
      const double done = std::max({t0, from_left, from_right}) + 1e-6;
      const std::uint32_t grp = group++;
      recv(i, left, site + 2, t0, std::max(t0, from_left) + 1e-6, post[static_cast<std::size_t>(i)], grp);
      recv(i, right, site + 2, t0, done, post[static_cast<std::size_t>(i)], grp);
    }
  }
  // Rank 0 receives from every other rank, probing (MPI_Iprobe) while it computes in between.
  void gather_by_probing(int site) {
    std::vector<double> sent(r.size());
    for (int i = 1; i < n(); ++i) {
      sent[static_cast<std::size_t>(i)] = at(i).t;
      send(i, 0, site, at(i).t + 1e-6);
    }
    for (int i = 1; i < n(); ++i) {
      const double arrive = sent[static_cast<std::size_t>(i)] + lat;
      if (arrive > at(0).t) {
        call(0, ev_type::other_mpi, f_iprobe, site + 1, at(0).t, at(0).t + 1e-7);
        at(0).t = arrive;  // polling, with compute between the probes
      }
      recv(0, i, site + 2, at(0).t, at(0).t + 1e-6, at(0).t);
    }
  }
  void coll(const std::vector<int>& who, std::uint64_t key, int site) {
    double last = 0;
    for (int i : who) last = std::max(last, at(i).t);
    for (int i : who) {
      event& e = call(i, ev_type::coll, f_allreduce, site, at(i).t, last + lat);
      e.peer = static_cast<int>(who.size());
      e.key = key;
      e.seq = next(i, 2, 0, 0, key);
    }
  }
};

std::vector<int> all_ranks(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

sim program(int n, unsigned seed, bool balanced) {
  std::mt19937 g(seed);
  sim s(n);
  std::vector<double> weight(static_cast<std::size_t>(n), 1.0);
  std::vector<int> even;
  for (int i = 0; i < n; i += 2) even.push_back(i);
  s.coll(all_ranks(n), world_key, 0);
  std::uniform_int_distribution<int> pick(0, 5), who(0, n - 1);
  for (int step = 0; step < 40; ++step) {
    if (!balanced && step % 10 == 0) {  // the slow rank moves now and then: chains of waits
      std::fill(weight.begin(), weight.end(), 1.0);
      weight[static_cast<std::size_t>(who(g))] = 3.0;
    }
    s.compute(g, 1e-3, weight);
    switch (pick(g)) {
      case 0:
        s.ring(10);
        break;
      case 1:
        s.pairs(20);
        break;
      case 2:
        s.halo(g, 30);
        break;
      case 3:
        s.gather_by_probing(40);
        break;
      case 4:
        s.coll(even, even_key, 50);
        break;
      default:
        s.coll(all_ranks(n), world_key, 60);
        break;
    }
  }
  s.coll(all_ranks(n), world_key, 70);
  return s;
}

replay_input input_of(const sim& s, int rank) {
  replay_input in;
  in.events = s.r[static_cast<std::size_t>(rank)].ev;
  for (std::int64_t i = 0; i < 100; ++i) in.site_ids.push_back(i);
  in.members[world_key] = all_ranks(s.n());
  for (int i = 0; i < s.n(); i += 2) in.members[even_key].push_back(i);
  return in;
}

void expect_same(const rootcause_result& serial, const replay_result& par, const std::vector<double>& crit_rank,
                 std::size_t top, const std::string& what) {
  SCOPED_TRACE(what);
  const double tol = 1e-9;
  EXPECT_NEAR(par.rootcause.total_wait, serial.total_wait, tol);
  EXPECT_NEAR(par.rootcause.attributed, serial.attributed, tol);
  ASSERT_EQ(crit_rank.size(), serial.critical_rank.size());
  for (std::size_t r = 0; r < crit_rank.size(); ++r) EXPECT_NEAR(crit_rank[r], serial.critical_rank[r], tol) << r;
  // The serial list in the parallel one's order: by `caused`, then region.
  auto causes = serial.causes;
  std::stable_sort(causes.begin(), causes.end(), [](const wait_cause& a, const wait_cause& b) {
    return std::tie(b.caused, a.region.rank, a.region.from, a.region.to) <
           std::tie(a.caused, b.region.rank, b.region.from, b.region.to);
  });
  ASSERT_EQ(par.rootcause.causes.size(), std::min(top, causes.size()));
  for (std::size_t i = 0; i < par.rootcause.causes.size(); ++i) {
    const wait_cause &p = par.rootcause.causes[i], &s = causes[i];
    EXPECT_NEAR(p.caused, s.caused, tol) << i;
    // Equal amounts may come in either order; distinct ones name the same region.
    const bool tie = (i > 0 && std::abs(causes[i - 1].caused - s.caused) < tol) ||
                     (i + 1 < causes.size() && std::abs(causes[i + 1].caused - s.caused) < tol);
    if (tie) continue;
    EXPECT_EQ(p.region, s.region) << i;
    EXPECT_NEAR(p.direct, s.direct, tol) << i;
    EXPECT_NEAR(p.compute, s.compute, tol) << i;
    EXPECT_NEAR(p.excess, s.excess, tol) << i;
    EXPECT_NEAR(p.critical, s.critical, tol) << i;
  }
  ASSERT_EQ(par.rootcause.critical.size(), std::min(top, serial.critical.size()));
  for (std::size_t i = 0; i < par.rootcause.critical.size(); ++i) {
    const auto &p = par.rootcause.critical[i], &s = serial.critical[i];
    EXPECT_NEAR(p.time, s.time, tol) << i;
    const bool tie = (i > 0 && std::abs(serial.critical[i - 1].time - s.time) < tol) ||
                     (i + 1 < serial.critical.size() && std::abs(serial.critical[i + 1].time - s.time) < tol);
    if (!tie) {
      EXPECT_EQ(p.region, s.region) << i;
    }
  }
}

TEST(replay, equals_the_serial_analysis_of_every_ranks_events) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (unsigned seed = 1; seed <= 12; ++seed)
    for (bool balanced : {false, true}) {
      const sim s = program(n, seed, balanced);
      std::vector<std::vector<event>> all;
      for (const auto& r : s.r) all.push_back(r.ev);
      const rootcause_result serial = root_causes(all);
      const std::size_t top = seed % 2 ? 20 : 3;  // a short list: the merge must keep the largest
      const replay_result par = replay(input_of(s, rank), MPI_COMM_WORLD, top);
      std::vector<double> crit(static_cast<std::size_t>(n));
      MPI_Allgather(&par.critical_compute, 1, MPI_DOUBLE, crit.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
      EXPECT_GT(serial.total_wait, 0);
      if (!balanced && n > 1) {
        EXPECT_GT(serial.attributed, 0);
      }
      expect_same(serial, par, crit, top, "seed " + std::to_string(seed) + (balanced ? " balanced" : " imbalanced"));
    }
}

// Rank 0 sends at t = 1 to rank 1, which waits from 0.2 (late sender 0.8); rank 1 then sends
// synchronously at 1.5 to rank 0, which posts at 1.9 (late receiver 0.4); all meet in a barrier
// that the last rank enters at 3.0.
TEST(replay, site_statistics_are_the_known_waits) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  sim s(n);
  s.coll(all_ranks(n), world_key, 0);
  s.at(0).t = 1.0;
  s.send(0, 1, 1, 1.0);
  s.recv(1, 0, 2, 0.2, 1.0, 0.2);
  s.at(1).t = 1.5;
  s.send(1, 0, 3, 1.9, f_ssend);
  s.recv(0, 1, 4, 1.9, 1.9, 1.9);
  for (int i = 0; i < n; ++i) s.at(i).t = i == n - 1 ? 3.0 : 2.0;
  s.coll(all_ranks(n), world_key, 5);
  const replay_result par = replay(input_of(s, rank), MPI_COMM_WORLD);
  const auto& w = par.sites;
  if (rank == 0) {
    EXPECT_NEAR(w[1].caused_late_sender, 0.8, 1e-12);
    EXPECT_NEAR(w[4].caused_late_receiver, 0.4, 1e-12);
    EXPECT_NEAR(w[4].late_sender, 0.0, 1e-12);
  }
  if (rank == 1) {
    EXPECT_NEAR(w[2].late_sender, 0.8, 1e-12);
    EXPECT_NEAR(w[3].late_receiver, 0.4, 1e-12);
  }
  EXPECT_NEAR(w[5].wait_collective, rank == n - 1 ? 0.0 : 1.0, 1e-12);
  // The barrier at t = 0 waited for nobody; the world waited 0.8 + 0.4 + (n - 1) s in all.
  EXPECT_NEAR(w[0].wait_collective, 0.0, 1e-12);
  EXPECT_NEAR(par.rootcause.total_wait, 0.8 + 0.4 + (n - 1) * 1.0, 1e-9);
}

}  // namespace
}  // namespace toru::tune::shim
