// SPDX-License-Identifier: BSD-3-Clause
// Measure mode: time every applicable candidate on scratch buffers, agree on the timings (max over
// ranks), keep the fastest, remember it as wisdom. Like FFTW_MEASURE, it costs a few executions of
// each candidate at plan time. The caller's chunk hook is not called during measurement.
#include <algorithm>
#include <vector>

#include "alltoall_impl.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"
#include "wisdom_entries.hpp"

namespace toru::comm::detail {

namespace {

constexpr int repetitions = 5;

double time_candidate(const plan_impl& plan, const void* in, void* out) {
  std::vector<std::byte> ws(plan.workspace_size());
  plan.execute(in, out, ws.data());  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repetitions; ++r) {
    check_mpi(MPI_Barrier(plan.x.comm), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    plan.execute(in, out, ws.data());
    t.push_back(MPI_Wtime() - t0);
  }
  std::nth_element(t.begin(), t.begin() + repetitions / 2, t.end());
  double mine = t[repetitions / 2], slowest = 0;
  check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, plan.x.comm), "MPI_Allreduce");
  return slowest;
}

}  // namespace

decision measure_alltoall(const communicator& comm, const exchange& x, const decision_input& in) {
  const std::string key = wisdom_key(x.nranks, in.bytes_per_pair, x.equal, comm.torus().to_string());
  // Rank 0's store decides, so ranks with different stores still agree.
  int known[3] = {0, 0, 0};
  if (x.rank == 0)
    if (auto w = find_wisdom(key)) known[0] = 1, known[1] = static_cast<int>(w->algorithm), known[2] = w->chunks;
  check_mpi(MPI_Bcast(known, 3, MPI_INT, 0, x.comm), "MPI_Bcast");
  if (known[0]) return {static_cast<alltoall_algorithm>(known[1]), known[2]};

  std::vector<decision> trials = {{alltoall_algorithm::direct, 1}, {alltoall_algorithm::pairwise, 1}};
  if (x.equal && x.contiguous) trials.push_back({alltoall_algorithm::bruck, 1});
  if (x.contiguous) {
    const int c = model_indirect_chunks(in);
    for (int chunks : {1, c, 2 * c})
      if (std::none_of(trials.begin(), trials.end(), [&](const decision& d) {
            return d.algorithm == alltoall_algorithm::indirect && d.chunks == chunks;
          }))
        trials.push_back({alltoall_algorithm::indirect, chunks});
  }
  std::vector<std::byte> send(x.send_span() * static_cast<std::size_t>(x.extent)),
      recv(x.recv_span() * static_cast<std::size_t>(x.extent));
  decision best;
  double best_time = -1;
  for (const auto& d : trials) {
    auto plan = prepare_plan(comm, x, d.algorithm, d.chunks, {});
    const double t = time_candidate(*plan, send.data(), recv.data());
    log::debug("comm: measure {} x{}: {:.3g} s", to_string(d.algorithm), d.chunks, t);
    if (best_time < 0 || t < best_time) best = d, best_time = t;
  }
  add_wisdom(
      {key, x.nranks, in.bytes_per_pair, x.equal, comm.torus().to_string(), best.algorithm, best.chunks, best_time});
  return best;
}

}  // namespace toru::comm::detail
