// SPDX-License-Identifier: BSD-3-Clause
// The fixed decision: which algorithm and how many chunks, from the plan's shape and the topology
// model. Kept apart from the algorithms (Open MPI coll/tuned style) so that the thresholds live in
// one place. Measurement (alltoall_measure.cpp) and TORU_ALLTOALL_ALGORITHM override it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "alltoall_impl.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"

namespace toru::comm::detail {

namespace {

// Software start-up per message (MPI call, matching, completion). Not measured by toru; the usual
// order of magnitude for MPI over a NIC. The torus spec's latency is per hop and is added by the model.
constexpr double message_startup = 2e-6;
// Memory copy bandwidth available to packing (pack, transpose, unpack); conservative for one core.
constexpr double copy_bandwidth = 5e9;
// Smallest phase-B message worth sending: below this the network's per-message cost dominates
// (the "bandwidth knee"; 4 KiB is where the netns testbed's TCP reaches half its rate).
constexpr double knee_bytes = 4096;
// Phase messages are kept at or under 16 KiB: above Open MPI's TCP eager limit (64 KiB) every chunk
// message pays a rendezvous round trip. The packet model predicted the loss and the emulated torus
// confirmed it (docs/history/benchmarks-2026-12.md, 2026-12-01, 2x2x4, 16 KiB messages in both good cases):
// 1 MiB per pair, 64 chunks (64 KiB messages) 67.7% of T_min, 256 chunks 94.9%; 256 KiB per pair,
// 64 chunks 94.3%, 256 chunks (4 KiB messages) 90.3%. The start-up optimum stays capped at 64; only
// the eager floor may go beyond, up to 1024. The cap was 256, which on 2x4x4 (8-rank planes) at
// 1 MiB per pair left 32 KiB messages: 66.4% of T_min, against 89.7% with the floor's 512 chunks
// (2026-12-03, docs/history/benchmarks-2026-12.md); 128 chunks 61.6%.
constexpr double eager_bytes = 16384;
constexpr int max_chunks = 64, max_eager_chunks = 1024;
// The fractions of T_min that MPI_Alltoall (as Open MPI's coll/tuned schedules it) and the indirect
// pipeline reach come from the network model's fitted tier (topology/fitted_model.hpp, fitted on the
// packet-level simulator), not from a constant: both are read at this block size and rank count.

bool all_switched(const topology::torus& t) {
  for (const auto& a : t.axes())
    if (!a.switched && a.extent > 1) return false;
  return true;
}

struct phase_times {
  double a = 0, b = 0, copy = 0;
  int messages = 1;
};

phase_times indirect_times(const decision_input& in) {
  phase_times t;
  const auto& shape = *in.torus;
  const int L = shape.longest_axis();
  std::vector<int> plane_axes;
  for (int a = 0; a < shape.ndims(); ++a)
    if (a != L && shape[a].extent > 1) plane_axes.push_back(a);
  const double m = in.bytes_per_pair, Q = in.plane_size, Z = in.line_size;
  t.b = topology::alltoall_bound(shape, m * Q, std::vector<int>{L});
  t.a = plane_axes.empty() ? 0 : topology::alltoall_bound(shape, m * Z, plane_axes);
  t.copy = 3 * m * in.nranks / copy_bandwidth;
  t.messages = std::max(1, (in.plane_size - 1) + (in.line_size - 1));
  return t;
}

// MPI_Alltoall as Open MPI's coll/tuned schedules it, in the fitted tier. Pairwise and Bruck are
// step-synchronised: their fitted fraction applies to their own flow-level step time, which costs
// O(P^2 hops) to compute; above 256 ranks it is taken as 2.3 T_min (its value on 8x8x16; 2.2 on
// 4x4x8, 1.9 on 2x2x4) so that a plan never waits for the model.
double mpi_alltoall_seconds(const topology::torus& shape, double m, int nranks) {
  const auto kind = topology::ompi_tuned_alltoall(nranks, m);
  if (kind == topology::packet_schedule_kind::linear || nranks <= 256)
    return topology::fitted_bandwidth_seconds(shape, kind, m);
  return 2.3 * topology::alltoall_bound(shape, m) / topology::fitted_efficiency(kind, m, nranks);
}

}  // namespace

int model_indirect_chunks(const decision_input& in) {
  // Without a plane (or a line) there is one phase and nothing to overlap it with.
  if (in.torus == nullptr || in.bytes_per_pair <= 0 || in.plane_size < 2 || in.line_size < 2) return 1;
  const auto t = indirect_times(in);
  // Total ~ T_B + (T_A + T_copy)/C + C * n_msg * alpha (docs/comm.md): minimised at
  // C* = sqrt((T_A + T_copy) / (n_msg * alpha)), capped so that phase-B messages stay above the knee.
  double c = std::sqrt((t.a + t.copy) / (t.messages * message_startup));
  // ... then raised so that the phase messages (Z m / C and Q m / C per peer) stay eager, where the
  // extra start-ups cost under 2% of phase B (a slow network, where a rendezvous round trip per
  // message is what the extra chunks save; on fast ones the start-ups would cost more).
  const double knee_cap = in.bytes_per_pair * in.plane_size / knee_bytes;
  c = std::min(c, double(max_chunks));
  const double eager_floor = std::ceil(in.bytes_per_pair * std::max(in.plane_size, in.line_size) / eager_bytes);
  if (eager_floor > c && eager_floor * t.messages * message_startup < 0.02 * t.b)
    c = std::min(eager_floor, double(max_eager_chunks));
  c = std::min(c, knee_cap);
  return std::max(1, static_cast<int>(std::lround(c)));
}

decision decide_alltoall(const decision_input& in) {
  decision d;
  // Nothing but MPI's own algorithm has won on a machine toru knows nothing about: on the shared
  // memory development node (2 cores, Open MPI 4.1 vader, 2 and 4 ranks, 8 B..4 MiB per pair,
  // docs/history/benchmarks-2026-12.md) direct was never beaten beyond noise, and Open MPI's tuned component
  // already switches to Bruck and pairwise internally. So without a torus from the caller, direct.
  // Beyond int byte counts only MPI's algorithm (with a block datatype) can move the data.
  if (in.torus == nullptr || !in.torus_given || !in.contiguous || in.plane_size < 2 || in.line_size < 2 ||
      all_switched(*in.torus) || !in.bytes_fit_int)
    return d;

  // A described torus: compare the model times of direct and the pipelined indirect schedule.
  const auto& shape = *in.torus;
  const double m = in.bytes_per_pair;
  if (shape.transport() == topology::link_transport::credit) {
    // An HPC torus: the credit model's fitted tier (topology/credit_model.hpp, derived from its
    // packet tier), MPI_Alltoall as the library's linear schedule with adaptive routing (BG/L's
    // default), indirect with dimension-order routing; the copies overlap all but one chunk.
    const int c = model_indirect_chunks(in);
    topology::credit_model_options o;
    o.packet.route = topology::credit_params::routing::adaptive;
    const double t_direct = topology::credit_fitted_seconds(shape, topology::packet_schedule_kind::linear, m, o) +
                            (in.nranks - 1) * message_startup;
    o.packet.route = topology::credit_params::routing::dimension_order;
    o.chunks = c;
    const auto t = indirect_times(in);
    const double t_indirect = topology::credit_fitted_seconds(shape, topology::packet_schedule_kind::indirect, m, o) +
                              t.copy / c + c * t.messages * message_startup;
    if (t_indirect < t_direct) {
      d.algorithm = alltoall_algorithm::indirect;
      d.chunks = c;
    }
    return d;
  }
  const double e_indirect = topology::fitted_efficiency(topology::packet_schedule_kind::indirect, m, in.nranks);
  const double t_direct = mpi_alltoall_seconds(shape, m, in.nranks) + (in.nranks - 1) * message_startup +
                          topology::alltoall_latency_direct(shape, 0);
  const int c = model_indirect_chunks(in);
  const auto t = indirect_times(in);
  // The pipeline's flow-level time, stretched by what packets and flow control cost it in the model.
  const double t_indirect = (std::max(t.b, std::max(t.a, t.copy) / c) + (t.a + t.copy) / c) / e_indirect +
                            c * t.messages * message_startup + topology::alltoall_latency_indirect(shape, 0);
  if (t_indirect < t_direct) {
    d.algorithm = alltoall_algorithm::indirect;
    d.chunks = c;
  }
  return d;
}

}  // namespace toru::comm::detail
