// SPDX-License-Identifier: BSD-3-Clause
// Data-parallel engine: every rank holds a replica of the model, runs forward and backward on its
// shard of the global batch, and this engine averages the gradients over the ranks while backward
// is still running.
//
// Buckets: parameter slots are grouped in reverse slot order (the order backward finishes them)
// into buckets of at most `bucket_bytes`, the first one (the output-side layers, ready first) of at
// most `first_bucket_bytes`; a slot larger than the cap is a bucket of its own (no splitting).
// Every rank builds the same buckets from the same slots (checked collectively).
//
// Overlap: the model's backward callback reports each finished slot (gradient_ready); a bucket's
// reduction starts as soon as all its slots are ready and every earlier bucket has started (same
// issue order on every rank), and each callback also tests the reductions in flight, which is what
// moves MPI's nonblocking collectives along while backward computes. finish() waits before the
// update.
//
// Reduction order (reduction::ordered, the default): per bucket, rank c owns the c-th of P equal
// element ranges; an MPI_Ialltoallv brings it every rank's copy of its range, it sums them in rank
// order 0, 1, ..., P-1 and divides by P, and an MPI_Iallgatherv returns the averaged range to all.
// Each element is therefore ((g_0 + g_1) + g_2) + ... / P whatever the bucket size, the algorithm
// Open MPI picks or the rank count's factorisation: results do not depend on bucket_bytes, and two
// runs are bit-identical. It moves 2 (P-1)/P of the bucket per rank, as a ring allreduce does.
// reduction::mpi uses MPI_Iallreduce (MPI_SUM) instead, whose association Open MPI may change with
// the count (docs/train.md has the measurement). Device buffers (memory_space::device) go through
// NCCL (ncclAllReduce with ncclAvg) when toru was built with NCCL.
//
//   toru::train::data_parallel dp(comm, m.parameters(), m.space(), {.bucket_bytes = 4 << 20});
//   dp.begin_step(m.gradient_data());
//   m.backward([&](int slot) { dp.gradient_ready(slot); });
//   double waited = dp.finish();  // gradient_data() now holds the average over ranks
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "toru/comm/communicator.hpp"
#include "toru/train/model.hpp"

namespace toru::train {

enum class reduction { ordered, mpi };
std::string_view to_string(reduction r) noexcept;

struct data_parallel_options {
  std::int64_t bucket_bytes = 25 << 20;       // as PyTorch DDP's bucket_cap_mb default
  std::int64_t first_bucket_bytes = 1 << 20;  // as DDP's first bucket
  reduction algorithm = reduction::ordered;
};

struct gradient_bucket {
  int first_slot = 0;       // lowest slot index in the bucket
  int last_slot = 0;        // highest (the bucket's slots are first_slot..last_slot)
  std::int64_t offset = 0;  // element offset of the lowest slot in the flat buffer
  std::int64_t count = 0;   // elements
  bool contiguous = true;   // slots adjacent in the flat buffer (else packed through a staging copy)
};

/// Buckets in issue order (bucket 0 holds the highest slots). Pure; the engine uses this.
std::vector<gradient_bucket> make_buckets(std::span<const parameter_slot> slots, std::int64_t bucket_bytes,
                                          std::int64_t first_bucket_bytes);

class data_parallel {
 public:
  /// Collective over comm.mpi(): agrees on the options and the slot layout (errc::mismatch naming
  /// what differs), duplicates the communicator for the two reduction phases. bucket_bytes and
  /// first_bucket_bytes must be >= 4. Throws errc::unsupported for device memory without NCCL.
  data_parallel(const comm::communicator& comm, std::span<const parameter_slot> slots, memory_space space,
                const data_parallel_options& options = {});
  ~data_parallel();
  data_parallel(const data_parallel&) = delete;
  data_parallel& operator=(const data_parallel&) = delete;

  int rank() const noexcept { return rank_; }
  int nranks() const noexcept { return nranks_; }
  MPI_Comm mpi() const noexcept { return comm_; }
  const std::vector<gradient_bucket>& buckets() const noexcept { return buckets_; }
  const data_parallel_options& options() const noexcept { return options_; }

  /// Starts a step whose gradients are `gradients` (the model's flat gradient buffer, all slots).
  void begin_step(std::span<float> gradients);
  /// Called from backward when `slot`'s gradient is final; starts ready buckets, tests those in flight.
  void gradient_ready(int slot);
  /// Starts what backward did not report, waits for every bucket; the gradients then hold the
  /// average over ranks, bit-identical on every rank. Returns the seconds spent waiting here.
  double finish();

  /// Blocking, collective: replaces `values` (host) by their average over ranks, in rank order
  /// (the batch-norm running statistics before evaluation and checkpoints).
  void average(std::span<float> values) const;

  /// Buckets whose reduction had started before finish() in the last step (overlap achieved).
  int buckets_started_in_backward() const noexcept { return started_in_backward_; }

  struct state;  // per-bucket requests and staging (data_parallel.cpp)
 private:
  void start(std::size_t b);
  bool advance(std::size_t b, bool wait);
  void mark_bucket(std::size_t b) const;
  // One rank on the host: the average of one copy is the copy (x / 1 is exact), so buckets are
  // finished where they lie, with no staging buffers (a second gradient-sized copy otherwise).
  bool alone() const noexcept { return nranks_ == 1 && space_ == memory_space::host; }

  data_parallel_options options_;
  std::vector<parameter_slot> slots_;
  std::vector<gradient_bucket> buckets_;
  std::vector<int> bucket_of_slot_;
  memory_space space_;
  MPI_Comm comm_ = MPI_COMM_NULL, gather_comm_ = MPI_COMM_NULL;
  int rank_ = 0, nranks_ = 1;
  std::span<float> grads_;
  std::vector<int> pending_;  // per bucket: slots not yet ready
  std::size_t next_to_start_ = 0, next_to_gather_ = 0;
  int started_in_backward_ = 0;
  std::unique_ptr<state> state_;
};

}  // namespace toru::train
