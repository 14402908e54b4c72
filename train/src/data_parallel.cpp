// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "nccl_reducer.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"
#include "toru/core/mpi.hpp"
#include "toru/train/host_sum.hpp"

namespace toru::train {

std::string_view to_string(reduction r) noexcept { return r == reduction::ordered ? "ordered" : "mpi"; }

std::vector<gradient_bucket> make_buckets(std::span<const parameter_slot> slots, std::int64_t bucket_bytes,
                                          std::int64_t first_bucket_bytes) {
  expect(bucket_bytes >= 4, "bucket_bytes", ">= 4 (one float)", std::to_string(bucket_bytes));
  expect(first_bucket_bytes >= 4, "first_bucket_bytes", ">= 4 (one float)", std::to_string(first_bucket_bytes));
  std::vector<gradient_bucket> out;
  std::int64_t bytes = 0;
  for (int s = static_cast<int>(slots.size()) - 1; s >= 0; --s) {
    const std::int64_t b = slots[static_cast<std::size_t>(s)].count * 4;
    const std::int64_t limit = out.size() == 1 ? first_bucket_bytes : bucket_bytes;  // of the bucket being filled
    if (out.empty() || bytes + b > limit) {
      out.push_back({.first_slot = s, .last_slot = s});
      bytes = 0;
    }
    out.back().first_slot = s;
    bytes += b;
  }
  for (auto& bk : out) {
    std::int64_t lo = INT64_MAX, hi = 0, total = 0;
    for (int s = bk.first_slot; s <= bk.last_slot; ++s) {
      const auto& sl = slots[static_cast<std::size_t>(s)];
      lo = std::min(lo, sl.offset);
      hi = std::max(hi, sl.offset + sl.count);
      total += sl.count;
    }
    bk.offset = lo;
    bk.count = total;
    bk.contiguous = hi - lo == total;
  }
  return out;
}

// Per bucket: phase 1 (alltoallv of owned ranges, or the whole allreduce), phase 2 (allgatherv).
struct data_parallel::state {
  struct bucket_state {
    MPI_Request r1 = MPI_REQUEST_NULL, r2 = MPI_REQUEST_NULL;
    int phase = 0;                     // 0 not started, 1 phase 1 in flight, 2 phase 2 in flight, 3 done
    std::vector<float> packed;         // non-contiguous buckets
    std::vector<float> incoming;       // P copies of this rank's range
    std::vector<const float*> copies;  // where each rank's copy starts in `incoming`
    std::vector<int> counts, displs;   // per rank: owned range (elements)
  };
  std::vector<bucket_state> b;
  detail::nccl_reducer_ptr nccl;
};

data_parallel::data_parallel(const comm::communicator& comm, std::span<const parameter_slot> slots, memory_space space,
                             const data_parallel_options& options)
    : options_(options), slots_(slots.begin(), slots.end()), space_(space), state_(std::make_unique<state>()) {
  MPI_Comm parent = comm.mpi();
  std::string layout;
  for (const auto& s : slots_) layout += fmt::format("{}:{}:{};", s.name, s.offset, s.count);
  validate_collectively(parent, "toru::train::data_parallel",
                        {{"bucket_bytes", options.bucket_bytes},
                         {"first_bucket_bytes", options.first_bucket_bytes},
                         {"algorithm", static_cast<std::int64_t>(options.algorithm)},
                         {"memory space", static_cast<std::int64_t>(space)},
                         same_text("parameter slots", layout)},
                        [&] {
                          buckets_ = make_buckets(slots_, options.bucket_bytes, options.first_bucket_bytes);
                          for (const auto& bk : buckets_)
                            expect(bk.count < INT_MAX, "bucket_bytes", "buckets under 2^31 floats",
                                   std::to_string(bk.count));
                          if (space == memory_space::device && !detail::nccl_available())
                            throw error(errc::unsupported,
                                        "data_parallel: the model's buffers are in device memory "
                                        "but this toru was built without NCCL");
                        });
  check_mpi(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(parent, &gather_comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &nranks_), "MPI_Comm_size");
  if (space == memory_space::device) state_->nccl = detail::make_nccl_reducer(comm);
  bucket_of_slot_.assign(slots_.size(), -1);
  state_->b.resize(buckets_.size());
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const auto& bk = buckets_[i];
    for (int s = bk.first_slot; s <= bk.last_slot; ++s)
      bucket_of_slot_[static_cast<std::size_t>(s)] = static_cast<int>(i);
    auto& st = state_->b[i];
    if (alone()) continue;  // no buffers: start() finishes the bucket where it lies
    if (!bk.contiguous) st.packed.resize(static_cast<std::size_t>(bk.count));
    if (options.algorithm == reduction::ordered) {
      st.counts.resize(static_cast<std::size_t>(nranks_));
      st.displs.resize(static_cast<std::size_t>(nranks_));
      for (int r = 0; r < nranks_; ++r) {
        const auto lo = bk.count * r / nranks_, hi = bk.count * (r + 1) / nranks_;
        st.displs[static_cast<std::size_t>(r)] = static_cast<int>(lo);
        st.counts[static_cast<std::size_t>(r)] = static_cast<int>(hi - lo);
      }
      const auto mine = static_cast<std::size_t>(st.counts[static_cast<std::size_t>(rank_)]);
      st.incoming.resize(mine * static_cast<std::size_t>(nranks_));
      for (int r = 0; r < nranks_; ++r) st.copies.push_back(st.incoming.data() + static_cast<std::size_t>(r) * mine);
    }
  }
  pending_.assign(buckets_.size(), 0);
}

data_parallel::~data_parallel() {
  // A step abandoned by an exception leaves requests in flight; MPI_Comm_free is still correct
  // (the communicator is freed once they complete), but the buffers must outlive them, so wait.
  for (auto& st : state_->b) {
    if (st.r1 != MPI_REQUEST_NULL) MPI_Wait(&st.r1, MPI_STATUS_IGNORE);
    if (st.r2 != MPI_REQUEST_NULL) MPI_Wait(&st.r2, MPI_STATUS_IGNORE);
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (gather_comm_ != MPI_COMM_NULL) MPI_Comm_free(&gather_comm_);
}

void data_parallel::begin_step(std::span<float> gradients) {
  std::int64_t need = 0;
  for (const auto& s : slots_) need = std::max(need, s.offset + s.count);
  expect(static_cast<std::int64_t>(gradients.size()) >= need, "gradients",
         fmt::format("at least {} floats (the slots' extent)", need), std::to_string(gradients.size()));
  for (const auto& st : state_->b)
    if (st.phase != 0 && st.phase != 3)
      throw error(errc::internal, "data_parallel::begin_step: the previous step was not finished");
  grads_ = gradients;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    pending_[i] = buckets_[i].last_slot - buckets_[i].first_slot + 1;
    state_->b[i].phase = 0;
  }
  next_to_start_ = next_to_gather_ = 0;
  started_in_backward_ = 0;
}

namespace {
float* bucket_data(std::span<float> grads, const gradient_bucket& bk, std::vector<float>& packed) {
  return bk.contiguous ? grads.data() + bk.offset : packed.data();
}
}  // namespace

void data_parallel::start(std::size_t i) {
  const auto& bk = buckets_[i];
  auto& st = state_->b[i];
  if (alone()) {
    mark_bucket(i);
    st.phase = 4;
    return;
  }
  if (!bk.contiguous) {
    float* dst = st.packed.data();
    for (int s = bk.first_slot; s <= bk.last_slot; ++s) {
      const auto& sl = slots_[static_cast<std::size_t>(s)];
      std::memcpy(dst, grads_.data() + sl.offset, static_cast<std::size_t>(sl.count) * sizeof(float));
      dst += sl.count;
    }
  }
  float* data = bucket_data(grads_, bk, st.packed);
  mark_bucket(i);
  if (space_ == memory_space::device) {
    detail::nccl_average(*state_->nccl, data, bk.count);
  } else if (options_.algorithm == reduction::mpi) {
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(bk.count), MPI_FLOAT, MPI_SUM, comm_, &st.r1),
              "MPI_Iallreduce");
  } else {
    // Every rank receives the same count (its own range) from every rank.
    const int mine = st.counts[static_cast<std::size_t>(rank_)];
    std::vector<int> rcounts(static_cast<std::size_t>(nranks_), mine), rdispls(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) rdispls[static_cast<std::size_t>(r)] = r * mine;
    check_mpi(MPI_Ialltoallv(data, st.counts.data(), st.displs.data(), MPI_FLOAT, st.incoming.data(), rcounts.data(),
                             rdispls.data(), MPI_FLOAT, comm_, &st.r1),
              "MPI_Ialltoallv");
  }
  st.phase = 1;
}

// A point event: the reduction runs asynchronously, so its start is what a profiler can place
// against backward (tune/'s trainer rules read it with train.comm_wait).
void data_parallel::mark_bucket(std::size_t i) const {
  toru::events::mark("train.bucket", static_cast<std::uint64_t>(buckets_[i].count) * sizeof(float),
                     space_ == memory_space::device         ? "nccl"
                     : options_.algorithm == reduction::mpi ? "mpi"
                                                            : "ordered",
                     static_cast<double>(i));
}

// Moves bucket i on as far as it can without blocking (or to done when `wait`). Returns whether done.
bool data_parallel::advance(std::size_t i, bool wait) {
  auto& st = state_->b[i];
  const auto& bk = buckets_[i];
  float* data = bucket_data(grads_, bk, st.packed);
  auto complete = [&](MPI_Request& r) {
    if (r == MPI_REQUEST_NULL) return true;
    if (wait) {
      check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      return true;
    }
    int flag = 0;
    check_mpi(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    return flag != 0;
  };
  if (st.phase == 1) {
    if (space_ == memory_space::device) {
      if (!wait) return false;
      detail::nccl_wait(*state_->nccl);
      st.phase = 3;
    } else if (options_.algorithm == reduction::mpi) {
      if (!complete(st.r1)) return false;
      const auto p = static_cast<float>(nranks_);
      for (std::int64_t k = 0; k < bk.count; ++k) data[k] /= p;
      st.phase = 3;
    } else {
      // Phase 2 calls must be issued in bucket order on every rank (one communicator, one order).
      if (i != next_to_gather_) return false;
      if (!complete(st.r1)) return false;
      const auto mine = static_cast<std::size_t>(st.counts[static_cast<std::size_t>(rank_)]);
      float* out = data + st.displs[static_cast<std::size_t>(rank_)];
      // Rank order, then the division: the CGDP helpers' kernel, so the engines agree bitwise.
      sum_in_order(out, st.copies, mine, static_cast<float>(nranks_));
      check_mpi(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, data, st.counts.data(), st.displs.data(), MPI_FLOAT,
                                gather_comm_, &st.r2),
                "MPI_Iallgatherv");
      ++next_to_gather_;
      st.phase = 2;
    }
  }
  if (st.phase == 2) {
    if (!complete(st.r2)) return false;
    st.phase = 3;
  }
  if (st.phase == 3 && !bk.contiguous) {
    const float* src = st.packed.data();
    for (int s = bk.first_slot; s <= bk.last_slot; ++s) {
      const auto& sl = slots_[static_cast<std::size_t>(s)];
      std::memcpy(grads_.data() + sl.offset, src, static_cast<std::size_t>(sl.count) * sizeof(float));
      src += sl.count;
    }
    st.phase = 4;  // unpacked; distinct from 3 only so the copy happens once
  }
  return st.phase >= 3;
}

void data_parallel::gradient_ready(int slot) {
  expect(slot >= 0 && static_cast<std::size_t>(slot) < slots_.size(), "slot", fmt::format("0..{}", slots_.size() - 1),
         std::to_string(slot));
  const int b = bucket_of_slot_[static_cast<std::size_t>(slot)];
  if (--pending_[static_cast<std::size_t>(b)] < 0)
    throw error(errc::internal, fmt::format("data_parallel: slot {} reported ready twice in one step", slot));
  while (next_to_start_ < buckets_.size() && pending_[next_to_start_] == 0) {
    start(next_to_start_++);
    ++started_in_backward_;
  }
  if (space_ == memory_space::host)
    for (std::size_t i = next_to_gather_; i < next_to_start_; ++i) advance(i, false);
}

double data_parallel::finish() {
  const toru::events::scope wait("train.comm_wait");  // the step blocked on gradient communication
  const auto t0 = std::chrono::steady_clock::now();
  while (next_to_start_ < buckets_.size()) start(next_to_start_++);
  for (std::size_t i = 0; i < buckets_.size(); ++i) advance(i, true);
  for (auto& st : state_->b) st.phase = 3;  // settled (unpacked buckets marked 4 included)
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void data_parallel::average(std::span<float> values) const {
  if (values.empty() && nranks_ == 1) return;
  // Gather everything to every rank and sum in rank order: the same association as the gradients.
  // Called for the batch-norm statistics (small), so the P-fold volume does not matter.
  const auto n = values.size();
  std::vector<float> all(n * static_cast<std::size_t>(nranks_));
  check_mpi(
      MPI_Allgather(values.data(), static_cast<int>(n), MPI_FLOAT, all.data(), static_cast<int>(n), MPI_FLOAT, comm_),
      "MPI_Allgather");
  const auto p = static_cast<float>(nranks_);
  for (std::size_t k = 0; k < n; ++k) {
    float sum = all[k];
    for (int r = 1; r < nranks_; ++r) sum += all[static_cast<std::size_t>(r) * n + k];
    values[k] = sum / p;
  }
}

}  // namespace toru::train
