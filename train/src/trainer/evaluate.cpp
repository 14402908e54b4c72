// SPDX-License-Identifier: BSD-3-Clause
// Evaluation on the test set with batch-norm statistics averaged over the ranks (rank order),
// restored afterwards so that the training state, and with it a resumed run, is unaffected.
#include <fmt/format.h>

#include "impl.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::train {

evaluation trainer::evaluate() {
  auto& s = *impl_;
  if (!s.test_set)
    throw error(errc::invalid_argument,
                fmt::format("toru::train::trainer::evaluate: no test set ({} is off)", s.name("eval")));
  s.eng->sync_weights(*s.m);
  const auto buf = s.m->buffer_data();
  const bool on_device = s.on_device();
  const std::vector<float> saved(on_device ? buf.end() : buf.begin(), buf.end());
  // On a CUDA device the statistics stay each rank's own (data_parallel averages host buffers).
  if (!on_device) s.dp->average(buf);
  s.m->parameters_changed();
  const sample_order test_order(s.test_set->size(), s.o.batch, 0, false);
  double sums[2] = {0, 0};
  detail::agree(s.mpi, "toru::train::trainer evaluation", [&] {
    for (std::int64_t t = 0; t < test_order.steps_per_epoch(); ++t) {
      s.test_set->read(test_order.shard(0, t, s.rank, s.nranks), s.images, s.labels);
      for (std::int64_t j = 0; j < s.o.accumulate; ++j) {
        const auto r = s.forward_micro(j, false, 0, t * s.o.batch + s.rank * s.local);
        sums[0] += r.loss / static_cast<double>(s.o.accumulate);
        sums[1] += static_cast<double>(r.correct);
      }
    }
  });
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, s.mpi), "MPI_Allreduce");
  std::copy(saved.begin(), saved.end(), buf.begin());
  s.m->parameters_changed();
  const auto n = test_order.steps_per_epoch();
  return {.loss = sums[0] / static_cast<double>(n * s.nranks),
          .accuracy = sums[1] / static_cast<double>(n * s.o.batch),
          .samples = n * s.o.batch};
}

}  // namespace toru::train
