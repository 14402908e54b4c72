// SPDX-License-Identifier: BSD-3-Clause
// indirect: the torus all-to-all (Doi & Negishi's idea, reconstructed in docs/comm.md).
//
// Rank (p, z): p its position in the plane orthogonal to the bottleneck axis, z its coordinate on
// that axis. Phase A: all-to-all inside the plane, rank (p, z) sending to plane peer (p', z) every
// block bound for line p' in one message (only short-axis links). Phase B: all-to-all along the line,
// (p', z) sending to (p', z'') every block it now holds for (p', z'') (only bottleneck-axis links).
// Every block is split into C chunks; chunk c is packed, sent through A, transposed, sent through B
// and unpacked while its neighbours are in other stages. Phase B runs on the communicator's thread
// so that it never waits for packing or phase A; without MPI_THREAD_MULTIPLE one thread drives
// both phases with nonblocking collectives.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "alltoall_impl.hpp"
#include "comm_state.hpp"
#include "mpi_progress_scope.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm::detail {

struct indirect_state {
  int Q = 1, Z = 1;
  // Byte counts and displacements (relative to the chunk's region) per chunk: [c * Q + q], [c * Z + z].
  std::vector<int> a_scount, a_sdispl, a_rcount, a_rdispl;
  std::vector<int> b_scount, b_sdispl, b_rcount, b_rdispl;
  std::vector<std::size_t> region;  // [c]: byte offset of chunk c in each of the two buffers; [C] = total
  std::vector<int> m;               // [p * Z + z'']: elements plane source p sends through me to (me.p, z'')
};

namespace {

// Waits for a request without holding a core for long: spins on MPI_Test for 20 us, then yields
// between tests; after 1 ms, and only when the communicator spans nodes, it sleeps with exponential
// backoff between tests. A shared-memory exchange needs the CPU for its copies and progresses only
// inside MPI calls: sleeping there would stretch every protocol step to a timer tick. On a network-bound exchange a
// chunk takes milliseconds, and a phase-B thread spinning next to a spinning phase-A thread would take the CPU that the
// kernel's network stack (and oversubscribed ranks) need; the socket buffers absorb the short pauses in progress.
void wait_politely(MPI_Request* req, const char* what, bool may_sleep) {
  using clock = std::chrono::steady_clock;
  constexpr auto spin = std::chrono::microseconds(20);
  constexpr auto yield = std::chrono::milliseconds(1);
  constexpr auto max_nap = std::chrono::microseconds(100);
  const auto start = clock::now();
  auto nap = std::chrono::microseconds(10);
  for (;;) {
    int done = 0;
    {
      const mpi_progress_scope progress;
      check_mpi(MPI_Test(req, &done, MPI_STATUS_IGNORE), what);
    }
    if (done) return;
    const auto waited = clock::now() - start;
    if (waited < spin) continue;
    if (waited < yield || !may_sleep) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(2 * nap, max_nap);
  }
}

void exclusive_scan(const int* count, int* displ, int n) {
  std::int64_t off = 0;
  for (int i = 0; i < n; ++i) {
    displ[i] = checked_int(off, "indirect message offset");
    off += count[i];
  }
}

std::int64_t sum(const int* v, int n) {
  std::int64_t s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

}  // namespace

std::size_t prepare_indirect(plan_impl& plan) {
  const auto& x = plan.x;
  const auto& cs = detail::comm_access::state(plan.comm);
  const int Q = cs.plane_size, Z = cs.line_size, C = plan.chunks;
  const auto es = static_cast<std::int64_t>(x.esize);
  auto st = std::make_shared<indirect_state>();
  st->Q = Q;
  st->Z = Z;

  // What every plane peer will route through me: its send counts to my line, one plane all-to-all.
  std::vector<int> mine(static_cast<std::size_t>(Q) * Z);
  for (int q = 0; q < Q; ++q)
    for (int z = 0; z < Z; ++z) mine[static_cast<std::size_t>(q) * Z + z] = x.scounts[cs.global_of[q * Z + z]];
  st->m.resize(mine.size());
  check_mpi(MPI_Alltoall(mine.data(), Z, MPI_INT, st->m.data(), Z, MPI_INT, cs.plane), "MPI_Alltoall");

  const auto QC = static_cast<std::size_t>(Q) * C, ZC = static_cast<std::size_t>(Z) * C;
  st->a_scount.resize(QC), st->a_sdispl.resize(QC), st->a_rcount.resize(QC), st->a_rdispl.resize(QC);
  st->b_scount.resize(ZC), st->b_sdispl.resize(ZC), st->b_rcount.resize(ZC), st->b_rdispl.resize(ZC);
  st->region.assign(static_cast<std::size_t>(C) + 1, 0);
  for (int c = 0; c < C; ++c) {
    int* as = &st->a_scount[c * static_cast<std::size_t>(Q)];
    int* ar = &st->a_rcount[c * static_cast<std::size_t>(Q)];
    int* bs = &st->b_scount[c * static_cast<std::size_t>(Z)];
    int* br = &st->b_rcount[c * static_cast<std::size_t>(Z)];
    for (int q = 0; q < Q; ++q) {
      std::int64_t s = 0, r = 0;
      for (int z = 0; z < Z; ++z) {
        s += chunk_length(x.scounts[cs.global_of[q * Z + z]], c, C);
        r += chunk_length(st->m[static_cast<std::size_t>(q) * Z + z], c, C);
      }
      as[q] = checked_int(s * es, "indirect phase-A message bytes");
      ar[q] = checked_int(r * es, "indirect phase-A message bytes");
    }
    for (int z = 0; z < Z; ++z) {
      std::int64_t s = 0, r = 0;
      for (int q = 0; q < Q; ++q) {
        s += chunk_length(st->m[static_cast<std::size_t>(q) * Z + z], c, C);
        r += chunk_length(x.rcounts[cs.global_of[q * Z + z]], c, C);
      }
      bs[z] = checked_int(s * es, "indirect phase-B message bytes");
      br[z] = checked_int(r * es, "indirect phase-B message bytes");
    }
    exclusive_scan(as, &st->a_sdispl[c * static_cast<std::size_t>(Q)], Q);
    exclusive_scan(ar, &st->a_rdispl[c * static_cast<std::size_t>(Q)], Q);
    exclusive_scan(bs, &st->b_sdispl[c * static_cast<std::size_t>(Z)], Z);
    exclusive_scan(br, &st->b_rdispl[c * static_cast<std::size_t>(Z)], Z);
    const std::int64_t need = std::max({sum(as, Q), sum(ar, Q), sum(bs, Z), sum(br, Z)});
    st->region[static_cast<std::size_t>(c) + 1] =
        st->region[static_cast<std::size_t>(c)] + static_cast<std::size_t>(need);
  }
  const std::size_t total = st->region.back();
  plan.indirect = std::move(st);
  // The phase-B thread pays off only when there is a phase A to overlap with (see alltoall_indirect);
  // the first plan that has one starts it.
  if (C > 1 && Q > 1) cs.start_worker();
  return 2 * total;
}

namespace {

// The copies of one run; buffer 0 holds chunk c's phase-A send then phase-B send data, buffer 1 its
// phase-A receive then phase-B receive data, each chunk in its own region so stages never collide.
struct indirect_run {
  const plan_impl& plan;
  const exchange& x;
  const comm_state& cs;
  const indirect_state& st;
  const std::byte* in;
  std::byte* out;
  std::byte* buf0;
  std::byte* buf1;
  int C;
  bool may_sleep;  // waits may sleep: the communicator spans nodes

  std::byte* region0(int c) const { return buf0 + st.region[static_cast<std::size_t>(c)]; }
  std::byte* region1(int c) const { return buf1 + st.region[static_cast<std::size_t>(c)]; }

  void pack(int c) const {
    std::byte* dst = region0(c);
    for (int q = 0; q < st.Q; ++q)
      for (int z = 0; z < st.Z; ++z) {
        const int g = cs.global_of[q * st.Z + z];
        const auto n = static_cast<std::size_t>(chunk_length(x.scounts[g], c, C)) * x.esize;
        copy_bytes(dst, in + static_cast<std::size_t>(x.sdispls[g] + chunk_begin(x.scounts[g], c, C)) * x.esize, n);
        dst += n;
      }
  }

  void transpose(int c) const {
    const std::byte* src = region1(c);
    std::byte* dst = region0(c);
    std::vector<std::size_t> cursor(static_cast<std::size_t>(st.Z));
    for (int z = 0; z < st.Z; ++z)
      cursor[static_cast<std::size_t>(z)] = static_cast<std::size_t>(st.b_sdispl[c * st.Z + z]);
    for (int q = 0; q < st.Q; ++q)
      for (int z = 0; z < st.Z; ++z) {
        const auto n =
            static_cast<std::size_t>(chunk_length(st.m[static_cast<std::size_t>(q) * st.Z + z], c, C)) * x.esize;
        copy_bytes(dst + cursor[static_cast<std::size_t>(z)], src, n);
        cursor[static_cast<std::size_t>(z)] += n;
        src += n;
      }
  }

  void unpack(int c) const {
    const std::byte* src = region1(c);
    for (int z = 0; z < st.Z; ++z)
      for (int q = 0; q < st.Q; ++q) {
        const int g = cs.global_of[q * st.Z + z];
        const auto n = static_cast<std::size_t>(chunk_length(x.rcounts[g], c, C)) * x.esize;
        copy_bytes(out + static_cast<std::size_t>(x.rdispls[g] + chunk_begin(x.rcounts[g], c, C)) * x.esize, src, n);
        src += n;
      }
  }

  // Per-chunk marks (toru/core/events.hpp, value = chunk): the pipeline's timeline for a trace.
  static void mark(const char* name, int c) { events::mark(name, 0, "", c); }

  void post_a(int c, MPI_Request* req) const {
    mark("comm.alltoall.a_post", c);
    const std::size_t o = static_cast<std::size_t>(c) * st.Q;
    const mpi_progress_scope progress;
    check_mpi(MPI_Ialltoallv(region0(c), &st.a_scount[o], &st.a_sdispl[o], MPI_BYTE, region1(c), &st.a_rcount[o],
                             &st.a_rdispl[o], MPI_BYTE, cs.plane, req),
              "MPI_Ialltoallv (phase A)");
  }
  void post_b(int c, MPI_Request* req) const {
    mark("comm.alltoall.b_post", c);
    const std::size_t o = static_cast<std::size_t>(c) * st.Z;
    const mpi_progress_scope progress;
    check_mpi(MPI_Ialltoallv(region0(c), &st.b_scount[o], &st.b_sdispl[o], MPI_BYTE, region1(c), &st.b_rcount[o],
                             &st.b_rdispl[o], MPI_BYTE, cs.line, req),
              "MPI_Ialltoallv (phase B)");
  }
  void finish(int c) const {
    unpack(c);
    plan.call_hook(c);
  }

  // Up to `window` phase-B exchanges in flight: a line all-to-all is a synchronising step, and with
  // one at a time the bottleneck links idle between chunks while the slowest peer finishes.
  static constexpr int window = 3;

  // The caller's side of the pipeline, shared by both drivers: pack and phase A run one chunk
  // ahead; once chunk c has crossed phase A and been transposed, `phase_b(c)` hands it on.
  template <class F>
  void pack_and_phase_a(F&& phase_b) const {
    std::vector<MPI_Request> a(static_cast<std::size_t>(C), MPI_REQUEST_NULL);
    pack(0);
    post_a(0, &a[0]);
    for (int c = 0; c < C; ++c) {
      const auto uc = static_cast<std::size_t>(c);
      if (c + 1 < C) {
        pack(c + 1);
        post_a(c + 1, &a[uc + 1]);
      }
      wait_politely(&a[uc], "MPI_Test (phase A)", may_sleep);
      mark("comm.alltoall.a_done", c);
      transpose(c);
      phase_b(c);
    }
  }

  // One thread: A(c+1) and up to `window` B's are in flight while this thread packs and copies.
  void single_threaded() const {
    std::vector<MPI_Request> b(static_cast<std::size_t>(C), MPI_REQUEST_NULL);
    int finished = 0;
    pack_and_phase_a([&](int c) {
      post_b(c, &b[static_cast<std::size_t>(c)]);
      while (c + 1 - finished >= window) {
        wait_politely(&b[static_cast<std::size_t>(finished)], "MPI_Test (phase B)", may_sleep);
        mark("comm.alltoall.b_done", finished);
        finish(finished++);
      }
    });
    while (finished < C) {
      wait_politely(&b[static_cast<std::size_t>(finished)], "MPI_Test (phase B)", may_sleep);
      mark("comm.alltoall.b_done", finished);
      finish(finished++);
    }
  }

  // Phase B on the communicator's thread, which keeps up to `window` line exchanges in flight and
  // reports them complete in order; this thread packs, runs A, transposes, unpacks and calls the hook.
  void threaded() const {
    // Shared with the worker's tasks, which may still be returning when this function has.
    struct shared {
      std::mutex mutex;
      std::condition_variable cv;
      int done = 0;  // chunks whose phase B completed, in order (published to this thread)
      std::exception_ptr error;
      std::vector<MPI_Request> b;     // worker only
      int posted = 0, completed = 0;  // worker only
    };
    auto sh = std::make_shared<shared>();
    sh->b.assign(static_cast<std::size_t>(C), MPI_REQUEST_NULL);
    // Worker side: complete the oldest exchanges until at most `keep` are in flight.
    auto complete_until = [this](shared& state, int keep) {
      while (state.posted - state.completed > keep) {
        wait_politely(&state.b[static_cast<std::size_t>(state.completed)], "MPI_Test (phase B)", may_sleep);
        mark("comm.alltoall.b_done", state.completed);
        ++state.completed;
        std::lock_guard lock(state.mutex);
        state.done = state.completed;
        state.cv.notify_one();
      }
    };
    auto fail = [](shared& state) {
      std::lock_guard lock(state.mutex);
      if (!state.error) state.error = std::current_exception();
      state.done = std::numeric_limits<int>::max();  // release the caller; the exchange is lost anyway
      state.cv.notify_one();
    };
    auto submit_b = [&](int c) {
      cs.worker()->submit([this, c, sh, complete_until, fail] {
        try {
          post_b(c, &sh->b[static_cast<std::size_t>(c)]);
          ++sh->posted;
          complete_until(*sh, c + 1 == C ? 0 : window - 1);  // the last chunk drains everything
        } catch (...) {
          fail(*sh);
        }
      });
    };
    int finished = 0;
    // Finishes every chunk phase B has delivered; blocks until at least `wait_for` have been.
    auto drain = [&](int wait_for) {
      int done = 0;
      {
        std::unique_lock lock(sh->mutex);
        sh->cv.wait(lock, [&] { return sh->done >= wait_for; });
        if (sh->error) std::rethrow_exception(sh->error);
        done = std::min(sh->done, C);
      }
      while (finished < done) finish(finished++);
    };
    try {
      pack_and_phase_a([&](int c) {
        submit_b(c);
        drain(0);
      });
      drain(C);
    } catch (...) {
      // The worker may still be sending from our buffers: let it complete what it posted.
      cs.worker()->submit([sh, complete_until, fail] {
        try {
          complete_until(*sh, 0);
        } catch (...) {
          fail(*sh);
        }
        std::lock_guard lock(sh->mutex);
        sh->done = std::numeric_limits<int>::max();
        sh->cv.notify_one();
      });
      std::unique_lock lock(sh->mutex);
      sh->cv.wait(lock, [&] { return sh->done == std::numeric_limits<int>::max(); });
      throw;
    }
  }
};

}  // namespace

void alltoall_indirect(const plan_impl& plan, const void* in, void* out, std::byte* ws) {
  const auto& st = *plan.indirect;
  const std::size_t total = st.region.back();
  indirect_run run{plan,
                   plan.x,
                   detail::comm_access::state(plan.comm),
                   st,
                   static_cast<const std::byte*>(in),
                   static_cast<std::byte*>(out),
                   ws,
                   ws + total,
                   plan.chunks,
                   detail::comm_access::state(plan.comm).spans_nodes};
  // The thread pays off only when there is a phase A to overlap phase B with; otherwise handing
  // chunks over costs a wake-up each and gains nothing.
  if (detail::comm_access::state(plan.comm).worker() && plan.chunks > 1 && st.Q > 1)
    run.threaded();
  else
    run.single_threaded();
}

}  // namespace toru::comm::detail
