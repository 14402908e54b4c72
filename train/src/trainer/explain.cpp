// SPDX-License-Identifier: BSD-3-Clause
// explain(): the cost model's prediction with the layer times measured in the steps taken, beside
// the measured step; helper_bindings(): where each rank's CGDP helper runs.
#include <algorithm>
#include <array>
#include <cstdio>

#include "impl.hpp"
#include "toru/core/mpi.hpp"

namespace toru::train {

std::optional<explain_report> trainer::explain() {
  auto& s = *impl_;
  if (!s.o.explain || s.timer.steps == 0 || !s.machine) return std::nullopt;
  const auto skip = static_cast<std::size_t>(s.timing_skip());
  auto med = [&](double step_timing::*field) {
    std::vector<double> v;
    for (std::size_t i = skip; i < s.times.size(); ++i) v.push_back(s.times[i].*field);
    return detail::median(v);
  };
  auto costs = s.timer.mean();
  for (auto& c : costs) {
    double fb[2] = {c.forward, c.backward};
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, fb, 2, MPI_DOUBLE, MPI_MAX, s.mpi), "MPI_Allreduce");
    c.forward = fb[0];
    c.backward = fb[1];
  }
  explain_report r;
  r.machine = *s.machine;
  r.measured_step = med(&step_timing::total);
  // The op timers miss what runs between ops: dispatch, the step's collective error check, and on
  // an oversubscribed node the time slices lost between ops. And the sum over layers of the slowest
  // rank's time can exceed every rank's phase, when ranks are slow in different layers. So the
  // layers are scaled to the measured phase (median, slowest rank); the engine's own work inside a
  // phase is modelled apart (CGDP's copies in the forward, its posts in the backward), so it is
  // taken out first.
  double ops[2] = {0, 0}, engine_work[2] = {0, 0};
  for (const auto& c : costs) {
    ops[0] += c.forward;
    ops[1] += c.backward;
  }
  const double steps_timed = static_cast<double>(std::max(s.timer.steps, 1));
  for (const auto& cs : s.chunk_sums) {
    engine_work[0] += cs.copy_in_seconds / steps_timed;
    engine_work[1] += cs.post_seconds / steps_timed;
  }
  double phase[2] = {med(&step_timing::forward) - engine_work[0], med(&step_timing::backward) - engine_work[1]};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, phase, 2, MPI_DOUBLE, MPI_MAX, s.mpi), "MPI_Allreduce");
  double scale[2] = {1, 1};
  for (int k = 0; k < 2; ++k)
    if (ops[k] > 0 && phase[k] > 0) {
      scale[k] = phase[k] / ops[k];
      r.op_timer_cover[k] = ops[k] / phase[k];
    }
  for (auto& c : costs) {
    c.forward *= scale[0];
    c.backward *= scale[1];
  }
  const bool cgdp = s.eng->kind() != engine_kind::allreduce;
  r.chunk_sizes = cgdp ? s.eng->chunk_sizes() : uniform_chunking(static_cast<int>(s.layers.size()), s.chunk_layers);
  r.allreduce = predict_allreduce(costs, *s.machine, s.o.bucket_bytes, s.o.first_bucket_bytes);
  r.cgdp = predict_cgdp(costs, *s.machine, r.chunk_sizes, s.eng->kind() != engine_kind::cgdp_sum);
  const double predicted = cgdp ? r.cgdp.step : r.allreduce.step;
  r.prediction_error = r.measured_step > 0 ? (predicted - r.measured_step) / r.measured_step : 0;
  if (cgdp)
    for (auto c : s.chunk_sums) {
      c.wait_seconds /= steps_timed;
      c.post_seconds /= steps_timed;
      c.copy_in_seconds /= steps_timed;
      c.host_seconds /= steps_timed;
      r.measured_chunks.push_back(c);
    }
  return r;
}

std::vector<std::string> trainer::helper_bindings() {
  auto& s = *impl_;
  if (s.eng->kind() == engine_kind::allreduce) return {};
  std::array<char, 256> line{};
  std::snprintf(line.data(), line.size(), "%s", s.eng->binding().c_str());
  std::vector<char> all(s.rank == 0 ? line.size() * static_cast<std::size_t>(s.nranks) : 0);
  check_mpi(MPI_Gather(line.data(), static_cast<int>(line.size()), MPI_CHAR, all.data(), static_cast<int>(line.size()),
                       MPI_CHAR, 0, s.mpi),
            "MPI_Gather");
  std::vector<std::string> out;
  for (int r = 0; s.rank == 0 && r < s.nranks; ++r)
    out.emplace_back(all.data() + static_cast<std::size_t>(r) * line.size());
  return out;
}

}  // namespace toru::train
