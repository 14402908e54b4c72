// SPDX-License-Identifier: BSD-3-Clause
// CGDP's device path on a real CUDA device (label gpu; skipped, and reported skipped, without one):
//  - a CUDA model trained through the device path (gradients to pinned window memory on a copy
//    stream, host sum and update, weights back on a second stream) ends with the weights of the same
//    CUDA model trained by a serial host loop (the ranks' gradients summed in rank order, / P, the
//    host optimizer), bit for bit: the device path moves bytes and adds no arithmetic;
//  - and with the CPU engine's weights (CPU model, host CGDP) to fp32 reassociation tolerance
//    (cuDNN/cuBLAS and oneDNN order their sums differently).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "toru/comm/communicator.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/train/cgdp.hpp"
#include "toru/train/data.hpp"
#include "toru/train/forward_hook.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"

namespace {

using namespace toru::train;

constexpr int steps = 4;
constexpr std::int64_t global = 12;
// Momentum, not Adam: Adam's normalisation turns the reassociation error of a near-zero gradient
// into a full-size step, which no fixed tolerance against the CPU engine could bound.
const optimizer_options oo{.kind = optimizer_kind::momentum, .lr = 0.05, .weight_decay = 1e-4};

std::vector<float> to_host(std::span<const float> device) {
  std::vector<float> h(device.size());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(h.data(), device.data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// mode 0: device path; 1: serial host loop on the CUDA model; 2: CPU model, host CGDP. `hook`: the
// forward takes each chunk's weights when it reaches the chunk (forward_hook.hpp), else
// acquire_weights takes them all before it.
std::vector<float> train(const toru::comm::communicator& comm, int mode, int chunk, bool hook = true) {
  const std::int64_t local = global / comm.size();
  const backend_kind be = mode == 2 ? backend_kind::cpu : backend_kind::cuda;
  model m(toru::swap::build_model("mlp", {.batch = local, .height = 28, .width = 28}),
          {.backend = be, .threads = 1, .seed = 5});
  auto data = make_synthetic({1, 28, 28}, m.classes(), 48, 17);
  sample_order order(data->size(), global, 3);
  std::optional<cgdp> cg;
  if (mode != 1)
    cg.emplace(comm, m.parameters(), m.space(), m.parameter_data(), oo,
               cgdp_options{.chunk_layers = chunk, .bind_helpers = false, .compute_stream = device_compute_stream(m)});
  if (cg && hook) set_forward_hook(m, [&](int op) { cg->before_forward_op(op, m.parameter_data()); });
  const auto n = static_cast<std::size_t>(m.parameter_count());
  std::vector<float> master = mode == 1 ? to_host(m.parameter_data()) : std::vector<float>{};
  optimizer opt(oo, m.parameter_count());
  std::vector<float> x(static_cast<std::size_t>(local * 784));
  std::vector<std::int32_t> y(static_cast<std::size_t>(local));
  for (int s = 0; s < steps; ++s) {
    if (cg) {
      if (!hook) cg->acquire_weights(m.parameter_data());
      m.parameters_changed();
    }
    data->read(order.shard(0, s, comm.rank(), comm.size()), x, y);
    m.forward(x, y, {.training = true, .step = static_cast<std::uint64_t>(s), .first_sample = s * global});
    const double lr = oo.lr;
    if (cg) {
      cg->begin_step(s, lr, m.gradient_data());
      m.backward([&](int slot) { cg->gradient_ready(slot); });
      cg->end_backward();
    } else {
      m.backward();
      const auto g = to_host(m.gradient_data());
      std::vector<float> all(n * static_cast<std::size_t>(comm.size()));
      MPI_Allgather(g.data(), static_cast<int>(n), MPI_FLOAT, all.data(), static_cast<int>(n), MPI_FLOAT,
                    MPI_COMM_WORLD);
      std::vector<float> sum(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
      for (int r = 1; r < comm.size(); ++r)
        for (std::size_t i = 0; i < n; ++i) sum[i] += all[static_cast<std::size_t>(r) * n + i];
      for (auto& v : sum) v /= static_cast<float>(comm.size());
      opt.step(master, sum, lr);
      EXPECT_EQ(cudaMemcpy(m.parameter_data().data(), master.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                cudaSuccess);
      m.parameters_changed();
    }
  }
  if (cg) cg->acquire_weights(m.parameter_data());
  set_forward_hook(m, {});
  if (mode == 2) return {m.parameter_data().begin(), m.parameter_data().end()};
  return to_host(m.parameter_data());
}

TEST(CgdpDevice, DevicePathEqualsTheSerialHostLoopBitwiseAndTheCpuEngineToTolerance) {
  if (toru::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << toru::gpu_absence_reason();
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto serial = train(comm, 1, 1);
  for (int chunk : {1, 2}) {
    const auto dev = train(comm, 0, chunk);
    ASSERT_EQ(dev, serial) << "device path, chunk " << chunk;
    ASSERT_EQ(train(comm, 0, chunk, false), serial) << "device path, all chunks before the forward, chunk " << chunk;
  }
  const auto cpu = train(comm, 2, 1);
  ASSERT_EQ(cpu.size(), serial.size());
  const auto init = [&] {
    model m(toru::swap::build_model("mlp", {.batch = global / comm.size(), .height = 28, .width = 28}),
            {.threads = 1, .seed = 5});
    return std::vector<float>(m.parameter_data().begin(), m.parameter_data().end());
  }();
  // Relative to how far training moved the weights: a lost or stale chunk update is off by a
  // step (about a quarter of `moved` over 4 steps), reassociation by ~1e-6 of it.
  double worst = 0, moved = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(cpu[i]) - serial[i]));
    moved = std::max(moved, std::abs(static_cast<double>(serial[i]) - init[i]));
  }
  EXPECT_GT(moved, 0) << "the weights did not train";
  EXPECT_LT(worst, 1e-2 * moved) << "device-path weights differ from the CPU engine's by " << worst << " (moved "
                                 << moved << ")";
}

TEST(CgdpDevice, CgdpSumIsRefusedWithADeviceModel) {
  if (toru::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << toru::gpu_absence_reason();
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  model m(toru::swap::build_model("mlp", {.batch = 4, .height = 28, .width = 28}),
          {.backend = backend_kind::cuda, .seed = 5});
  EXPECT_THROW(cgdp(comm, m.parameters(), m.space(), m.parameter_data(), oo, {.host_update = false}), toru::error);
}

}  // namespace
