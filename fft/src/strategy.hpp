// SPDX-License-Identifier: BSD-3-Clause
// The plan-time strategy table (docs/fft.md, "Strategy"): every way a plan can run its transposes,
// whether it applies, and what the cost model expects it to cost. effort::estimate takes the
// cheapest applicable candidate; effort::measure times every applicable one at plan time and takes
// the fastest (rank 0's choice, broadcast).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "host_share.hpp"
#include "node_window.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft::detail {

struct strategy {
  bool window = false;   // node-local one-copy window instead of an all-to-all
  bool overlap = false;  // local FFTs of arrived chunks while later chunks are in flight
  int chunks = 1;        // chunks per exchange (window: cache blocks of the copy-out)
  bool mid = false;      // 3D slab through FFTW-MPI's middle layout M (slab_vector_step)
  bool direct = false;   // ... with the local FFTs writing into the node array (slab_direct_step);
                         // without `mid`: the 1D plan's node arrays (six_step_direct_step)
  std::string name() const;
};

/// What the cost model needs to know about a plan.
struct plan_facts {
  double exchange_bytes = 0;  // bytes this rank sends and receives per transpose (largest stage)
  int exchanges = 1;          // transposes per forward transform
  double fft_flops = 0;       // local FFT flops per forward transform on this rank
  bool one_node = false;      // every rank of every exchange communicator on one node (collective fact)
  bool device = false;        // cufft backend
  bool overlap_allowed = true;
  int chunks_requested = 0;  // options.chunks
  exchange_path path = exchange_path::automatic;
  bool algorithm_forced = false;  // comm::resolved_algorithm: options.algorithm or TORU_ALLTOALL_ALGORITHM
  bool torus_described = false;   // communicator::torus_given(): ranks are nodes of a described torus
  double ranks_per_core = 1;      // ranks sharing one host core (host_share.hpp), >= 1
  double wire_seconds = -1;       // one exchange through toru::comm on the described torus; < 0: B / 1 GB/s
  double mid_wire_seconds = -1;   // ... through MPI_Alltoallw (MPI's linear schedule); < 0: wire_seconds
  bool overlap_forced = false;    // TORU_FFT_OVERLAP=force on some rank: only the overlapped candidate
  bool mid_possible = false;      // the slab's middle layout M applies (make_layout3d)
  bool mid_required = false;      // ... and the output layout is M (transposed order)
  int mid_exchanges = 0;          // transposes per forward transform through M
  bool direct_possible = false;   // M as a node array (slab_direct_step) exists for this plan
  std::string direct_why;         // why not, when !direct_possible (default: MPI's placement)
  std::string forced_name;        // TORU_FFT_STRATEGY (rank 0's): only the candidate of that name
  // Memory traffic of one window transpose, in streaming copies of B bytes (read + write = 2 per
  // copy). The 1D plan's two-axis transposes: write into the peers (2) plus copy-out (2). The 3D
  // plans set theirs from the idle 2-core machine's timings of every candidate (docs/fft.md,
  // "Strategy", toru-fft-bench --candidates).
  double window_copies = 4;
  double mid_window_copies = 4;
  // The direct window's row scatter/gather into the node arrays, per exchange.
  double direct_copies = 3;
  // The 1D plan's direct window (six_step_direct_step): its copies of B per forward transform in
  // all (0: the plan has no such candidate). direct_possible and direct_why apply to it as well.
  double direct_1d_copies = 0;
};

struct candidate {
  strategy s;
  bool applicable = false;
  std::string why;  // why not, when not applicable
  double cost = 0;  // seconds, model estimate per forward transform
  // Why MEASURE leaves it untimed (empty: timed): where the model says it can only be slower than
  // a twin that is timed, timing it would be plan time spent on a foregone answer.
  std::string untimed;
};

std::vector<candidate> strategy_table(const plan_facts& f);

/// The 3D plans' window weights (window_copies, mid_window_copies, direct_copies), calibrated on
/// the idle 2-core machine (docs/fft.md, "Strategy"): one place for plan3d and its test.
void set_3d_window_weights(plan_facts& f);

/// Why no node window applies to a plan with these facts ("" where one does): device buffers,
/// ranks on several nodes, options.path = alltoall, a forced algorithm, a described torus.
std::string why_no_window(const plan_facts& f);

/// Whether a direct window's node arrays exist, decided alike by the 1D and 3D plans (collective
/// through `allocate`, which allocates them or finds them in the communicator's cache and returns
/// whether MPI placed their parts end to end). Call it only where the plan has the direct
/// candidate's layout. Where a window applies, the arrays are allocated only where the candidate
/// can be chosen: MEASURE times it (`measured`), TORU_FFT_STRATEGY names it, or ESTIMATE's model,
/// costed with the arrays assumed, takes it. Sets f.direct_possible and f.direct_why; every rank
/// decides the same (the facts are agreed).
void decide_direct_arrays(plan_facts& f, bool measured, const strategy& direct, const std::function<bool()>& allocate);

/// "window, 4 blocks: model 0.012 s; all-to-all, overlap x4: n/a (options.overlap = false); ..."
std::string describe_table(const std::vector<candidate>& table);

/// The names of the applicable candidates, in table order.
std::vector<std::string> applicable_names(const std::vector<candidate>& table);
/// (name, seconds) of each applicable candidate that `seconds` (a plan's MEASURE figures, one per
/// table entry; empty when nothing was timed) holds.
std::vector<std::pair<std::string, double>> timed_names(const std::vector<candidate>& table,
                                                        const std::vector<double>& seconds);

/// ESTIMATE's pick: the cheapest applicable candidate of the table (index into it), except that an
/// overlapping candidate must be cheaper than the cheapest non-overlapping one by overlap_margin of
/// that one's cost; a smaller predicted saving is within the model's error and overlap's hand-offs
/// can lose it (-1 when none applies).
inline constexpr double overlap_margin = 0.05;
int cheapest(const std::vector<candidate>& table);

/// Collective: rank 0's choice among the applicable candidates from per-candidate times (max over
/// ranks taken here), so that every rank builds the same plan. Times of inapplicable ones ignored.
int fastest(MPI_Comm comm, const std::vector<candidate>& table, const std::vector<double>& seconds);

/// effort::measure's timing protocol. Plan-time timings on shared or oversubscribed cores are
/// noisy: one lucky timing of a candidate 10 % slower beats the faster one. So the candidates whose
/// first figure is within runoff_margin of the fastest (at most runoff_finalists of them) are timed
/// again in rotating order until each has runoff_figures figures, and the median of them decides;
/// runoff_figures_short where the fastest figure is under short_figure_seconds, since a burst on
/// the VM moves a few-millisecond transform by 10-30 %: at 128^3 r2c on 2 ranks (6 ms) three
/// figures took a candidate 20 % slower in two of five plans.
/// One unlucky figure (a descheduled rank, a first run's page faults) must not rule out the fastest
/// either: a candidate outside the margin of the fastest figure so far is timed once more, and the
/// better of its two counts.
inline constexpr double runoff_margin = 0.2;
inline constexpr std::size_t runoff_finalists = 3;
inline constexpr int runoff_figures = 3;
inline constexpr int runoff_figures_short = 5;
inline constexpr double short_figure_seconds = 0.02;
/// A figure of a transform this long is one run, without a warm-up: 384^3 on 2 ranks spent 24 runs
/// of 0.35-0.45 s on MEASURE's figures, 9 s of its 15 s plan. A shorter one, where a descheduled
/// rank or a timer tick is a larger share, is the best of two after a warm-up (time_steps).
inline constexpr double single_run_seconds = 0.1;

/// Collective: times the applicable candidates (time(i) is collective; a figure is the max over
/// ranks) under the protocol above and returns fastest()'s pick; `seconds` receives each timed
/// candidate's deciding figure (the median for finalists, the one figure for the rest; 0 for a
/// candidate left untimed: `candidate::untimed`).
int timed_choice(MPI_Comm comm, const std::vector<candidate>& table, const std::function<double(int)>& time,
                 std::vector<double>& seconds);

/// Whether TORU_FFT_OVERLAP=force asks for the overlapped all-to-all (tests and forced benchmarks:
/// the model would not choose it for small sizes or on one node).
bool overlap_forced_by_environment();

/// Collective over comm: rank 0's TORU_FFT_STRATEGY (a candidate's name, as strategy() prints it),
/// or "" (tests and forced benchmarks: every candidate but that one becomes inapplicable).
std::string forced_strategy(MPI_Comm comm);

/// Collective over comm: what every plan (1D or 3D) knows from its options and from `all`, the
/// communicator its exchanges span (built over comm from opts.comm), with this rank's exchange bytes
/// replaced by the largest rank's. Local sizes differ between ranks (uneven splits); the costs, and
/// so the choice, must not, or ranks build different exchanges and hang. comm's environment is read
/// by comm only: whether the torus is described (then the exchanges belong on the torus, and an
/// emulated torus on one host must not take the window) is all.torus_given(), and whether an
/// all-to-all algorithm is forced (then the all-to-all path is what is asked) comm::resolved_algorithm.
template <class Options>
plan_facts option_facts(MPI_Comm comm, const comm::communicator& all, const Options& opts, bool device,
                        double exchange_bytes) {
  plan_facts f;
  check_mpi(MPI_Allreduce(&exchange_bytes, &f.exchange_bytes, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  f.device = device;
  f.one_node = !device && window_applicable(comm);
  f.overlap_allowed = opts.overlap;
  f.chunks_requested = opts.chunks;
  f.path = opts.path;
  f.torus_described = all.torus_given();
  f.ranks_per_core = ranks_per_core(comm);
  // Agreed, so that a variable set on some ranks only still gives one strategy everywhere (comm's plan
  // then refuses the differing TORU_ALLTOALL_ALGORITHM on every rank instead of some ranks waiting).
  const bool algorithm_forced = comm::resolved_algorithm(opts.algorithm) != comm::alltoall_algorithm::automatic;
  int forced[2] = {overlap_forced_by_environment() ? 1 : 0, algorithm_forced ? 1 : 0}, any[2] = {0, 0};
  check_mpi(MPI_Allreduce(forced, any, 2, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  f.overlap_forced = any[0] == 1;
  f.algorithm_forced = any[1] == 1;
  f.forced_name = forced_strategy(comm);
  return f;
}

}  // namespace toru::fft::detail
