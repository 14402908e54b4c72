// SPDX-License-Identifier: BSD-3-Clause
// The trainer's checkpoints (toru/train/checkpoint.hpp): the weights (CGDP's master weights,
// acquired into the model), every rank's batch-norm buffers, the optimizer state (CGDP: gathered
// from the helpers into the allreduce engine's layout, so either engine resumes either's).
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "impl.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/train/checkpoint.hpp"

namespace toru::train {

namespace {

checkpoint_state describe(trainer::impl& s) {
  auto shape = s.m->input_shape();
  shape.erase(shape.begin());
  checkpoint_state st;
  st.model_name = s.model_name;
  st.model_signature =
      model_signature(s.m->parameters(), shape, s.m->classes(), static_cast<std::int64_t>(s.m->buffer_data().size()));
  st.nranks = s.nranks;
  st.seed = s.o.seed;
  st.global_batch = s.o.batch;
  st.optimizer = std::string(to_string(s.o.optimizer.kind));
  return st;
}

}  // namespace

std::filesystem::path trainer::save(const std::filesystem::path& dir) {
  auto& s = *impl_;
  const auto nb = s.m->buffer_data().size();
  s.eng->sync_weights(*s.m);
  std::int64_t opt_steps = 0;
  std::vector<float> opt_state = s.eng->optimizer_state(opt_steps);
  std::vector<float> all_buffers(s.rank == 0 ? nb * static_cast<std::size_t>(s.nranks) : 0);
  check_mpi(MPI_Gather(s.m->buffer_data().data(), static_cast<int>(nb), MPI_FLOAT, all_buffers.data(),
                       static_cast<int>(nb), MPI_FLOAT, 0, s.mpi),
            "MPI_Gather");
  detail::agree(s.mpi, "toru::train::trainer checkpoint", [&] {
    if (s.rank != 0) return;
    auto st = describe(s);
    st.step = s.step;
    st.epoch = s.step / s.order->steps_per_epoch();
    st.optimizer_steps = opt_steps;
    st.settings = nlohmann::ordered_json{{"lr", s.o.optimizer.lr},
                                         {"optimizer", to_string(s.o.optimizer.kind)},
                                         {"schedule", to_string(s.o.schedule.kind)},
                                         {"data", to_string(s.o.data)}}
                      .dump();
    const auto p = s.m->parameter_data();
    st.parameters.assign(p.begin(), p.end());
    st.buffers = std::move(all_buffers);
    st.optimizer_state = std::move(opt_state);
    write_checkpoint(dir, st);
  });
  // Every rank names the same file (only rank 0 wrote it).
  s.last_checkpoint = dir / fmt::format("checkpoint-{}.toru", s.step);
  if (s.o.events.checkpoint) s.o.events.checkpoint(s.last_checkpoint);
  return s.last_checkpoint;
}

void trainer::resume(const std::filesystem::path& path) {
  auto& s = *impl_;
  std::filesystem::path file;
  checkpoint_state st;
  toru::validate_collectively(s.mpi, "toru::train::trainer::resume", {same_text("path", path.string())}, [&] {
    file = std::filesystem::is_regular_file(path) ? path : latest_checkpoint(path);
    st = read_checkpoint(file);
    auto expected = describe(s);
    expected.parameters.resize(static_cast<std::size_t>(s.m->parameter_count()));
    expected.buffers.resize(s.m->buffer_data().size() * static_cast<std::size_t>(s.nranks));
    expected.optimizer_state.resize(optimizer(s.o.optimizer, s.m->parameter_count()).state().size());
    check_compatible(st, expected, file);
    if (st.seed != s.o.seed)
      throw error(errc::mismatch, fmt::format("{}: checkpoint of seed {}, this run has {} {}: cannot resume",
                                              file.string(), st.seed, s.name("seed"), s.o.seed));
  });
  const auto nb = s.m->buffer_data().size();
  s.eng->sync_weights(*s.m);  // nothing of an earlier step left with CGDP's helpers
  std::copy(st.parameters.begin(), st.parameters.end(), s.m->parameter_data().begin());
  std::copy_n(st.buffers.begin() + static_cast<std::ptrdiff_t>(nb) * s.rank, nb, s.m->buffer_data().begin());
  s.m->parameters_changed();
  s.eng->restore(*s.m, st.optimizer_state, st.optimizer_steps);
  s.step = st.step;
  s.resumed_from = file;
  s.last_checkpoint = file;
}

}  // namespace toru::train
