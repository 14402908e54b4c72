// SPDX-License-Identifier: BSD-3-Clause
// The data-parallel engine on real models: P ranks with B/P samples each follow the one-rank run
// with the whole batch B (computed on every rank, no communication) to reassociation tolerance;
// every bucket size gives bit-identical weights; two runs with the same seed are bit-identical.
// Models without batch norm (mlp, lenet5): with batch norm, P ranks normalise over B/P samples,
// a different function from B (as PyTorch DDP without SyncBatchNorm), so no equality is expected.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "mpi_test.hpp"
#include "toru/swap/models.hpp"
#include "toru/train/data.hpp"
#include "toru/train/data_parallel.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"

namespace {

using namespace toru::train;

constexpr std::int64_t global_batch = 12;  // divisible by 1, 2, 3 and 4 ranks
constexpr int steps = 4;

struct result {
  std::vector<float> params;
  double last_loss = 0;
  double last_loss_global = 0;  // mean over the global batch
};

// `nranks` == 1: the reference (whole batch, this rank alone); otherwise the data-parallel run.
result train(const std::string& name, const toru::comm::communicator* comm, std::int64_t bucket_bytes,
             optimizer_kind kind) {
  const int rank = comm ? comm->rank() : 0, nranks = comm ? comm->size() : 1;
  const std::int64_t local = global_batch / nranks;
  model m(toru::swap::build_model(name, {.batch = local, .height = 28, .width = 28}), {.threads = 1, .seed = 5});
  auto data = make_synthetic({1, 28, 28}, m.classes(), 48, 17);
  sample_order order(data->size(), global_batch, 3);
  optimizer opt({.kind = kind, .lr = kind == optimizer_kind::adam ? 1e-3 : 0.05, .weight_decay = 1e-4},
                m.parameter_count());
  std::optional<data_parallel> dp;
  if (comm)
    dp.emplace(*comm, m.parameters(), m.space(),
               data_parallel_options{.bucket_bytes = bucket_bytes,
                                     .first_bucket_bytes = std::min<std::int64_t>(bucket_bytes, 4096)});
  std::vector<float> x(static_cast<std::size_t>(local * 784));
  std::vector<std::int32_t> y(static_cast<std::size_t>(local));
  result r;
  for (int s = 0; s < steps; ++s) {
    const auto idx = order.shard(s / order.steps_per_epoch(), s % order.steps_per_epoch(), rank, nranks);
    data->read(idx, x, y);
    r.last_loss =
        m.forward(
             x, y,
             {.training = true, .step = static_cast<std::uint64_t>(s), .first_sample = s * global_batch + rank * local})
            .loss;
    if (dp) {
      dp->begin_step(m.gradient_data());
      m.backward([&](int slot) { dp->gradient_ready(slot); });
      dp->finish();
    } else {
      m.backward();
    }
    opt.step(m.parameter_data(), m.gradient_data(), 0.05);
    m.parameters_changed();
  }
  r.params.assign(m.parameter_data().begin(), m.parameter_data().end());
  r.last_loss_global = r.last_loss;
  if (comm) {
    MPI_Allreduce(&r.last_loss, &r.last_loss_global, 1, MPI_DOUBLE, MPI_SUM, comm->mpi());
    r.last_loss_global /= nranks;
  }
  return r;
}

class DataParallelModel : public ::testing::TestWithParam<const char*> {};

TEST_P(DataParallelModel, EqualsTheOneRankLargeBatch) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  for (auto kind : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam}) {
    const auto want = train(GetParam(), nullptr, 0, kind);
    const auto got = train(GetParam(), &comm, 1 << 16, kind);
    ASSERT_EQ(got.params.size(), want.params.size());
    if (kind == optimizer_kind::adam) {
      // Adam's step is about lr * sign(g) for every |g| >> eps: a gradient component near zero whose
      // sign the reassociation flips moves by 2 lr, so weights are not comparable element by
      // element; the loss of the last step (computed from all of them) is.
      EXPECT_NEAR(got.last_loss_global, want.last_loss_global, 1e-4 * std::abs(want.last_loss_global)) << comm.size();
      continue;
    }
    // Tolerance: the batch sums are reassociated (per-rank partial sums, oneDNN's blocking for
    // other shapes) over four steps: 2e-5 relative to the weight's scale, with a floor of 1e-6.
    double worst = 0;
    for (std::size_t i = 0; i < want.params.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(got.params[i]) - want.params[i]) /
                                  (1e-6 / 2e-5 + std::abs(static_cast<double>(want.params[i]))));
    EXPECT_LT(worst, 2e-5) << to_string(kind) << " on " << comm.size() << " ranks";
  }
}

TEST_P(DataParallelModel, EveryBucketSizeAndEveryRunIsBitIdentical) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto base = train(GetParam(), &comm, 25 << 20, optimizer_kind::momentum);
  for (std::int64_t bytes : {4LL, 1000LL, 40000LL, 25LL << 20}) {
    const auto other = train(GetParam(), &comm, bytes, optimizer_kind::momentum);
    EXPECT_EQ(other.params, base.params) << "bucket bytes " << bytes;
  }
  // And every rank holds the same weights.
  auto mine = base.params;
  std::vector<float> root = mine;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(mine, root);
}

INSTANTIATE_TEST_SUITE_P(Models, DataParallelModel, ::testing::Values("mlp", "lenet5"));

}  // namespace
