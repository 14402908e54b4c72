// SPDX-License-Identifier: BSD-3-Clause
// The backend-independent 3D plan (FFTW backend): layouts, steps and execution.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_ops.hpp"
#include "comm_cache.hpp"
#include "steps.hpp"
#include "strategy.hpp"
#include "toru/fft/fft3d.hpp"
#include "wisdom.hpp"

namespace toru::fft::detail {

/// Allocation through FFTW (SIMD-aligned), released on destruction.
class aligned_buffer {
 public:
  aligned_buffer() = default;
  explicit aligned_buffer(std::size_t bytes);
  ~aligned_buffer();
  aligned_buffer(aligned_buffer&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  aligned_buffer& operator=(aligned_buffer&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

/// Layout of the three stages on one rank (see fft3d.hpp).
struct layout3d {
  std::array<std::int64_t, 3> n{};
  std::int64_t nc = 0;  // points along axis 2 on the complex side
  bool r2c = false;
  decomposition decomp = decomposition::slab;
  int p0 = 1, p1 = 1, r0 = 0, r1 = 0;
  box3d s0, s1, s2;  // complex layouts; s1 unused for slabs
  box3d real_in;     // r2c: padded real s0
  // Slab through FFTW-MPI's transposed layout [i1 part][i0][i2] (slab_vector_step), which is
  // also the transposed output then; see make_layout3d for when.
  bool vector_mid = false;
  box3d mid;
  box3d out;  // the forward output: s0 (natural), mid or s2 (transposed)
  std::int64_t alloc = 0;
};

/// Throws toru::error when the options cannot be honoured for n on nranks.
/// device: for the cufft backend (which has no middle-layout path).
layout3d make_layout3d(int nranks, int rank, std::array<std::int64_t, 3> n, bool r2c, const options3d& opts,
                       bool device);

template <class T>
class plan3d {
 public:
  /// device: the cufft backend (buffers, workspace and local FFTs on the current CUDA device).
  plan3d(MPI_Comm comm, std::array<std::int64_t, 3> n, bool r2c, const options3d& opts, bool device = false);
  ~plan3d();

  const layout3d& layout() const { return lay_; }
  /// The caller's boxes: its own (use_boxes) or the plan's.
  const box3d& inbox() const { return io_ ? user_in_ : plan_inbox(); }
  const box3d& outbox() const { return io_ ? user_out_ : plan_outbox(); }
  std::int64_t alloc_size() const;
  /// Collective: the caller's own in and out boxes (reshape3d's rules; host backends only).
  /// execute then reshapes in to the plan's own layout and its result to out, one exchange each;
  /// or, where they are the plan's own boxes (real rows packed or padded) and the strategy is the
  /// direct window, runs straight between the caller's buffers (use_own_boxes).
  void use_boxes(MPI_Comm comm, const box3d& in, const box3d& out);
  /// Collective, r2c: the plan's own boxes with packed real rows (options3d::rows).
  void use_packed_rows(MPI_Comm comm) {
    box3d in = plan_inbox();
    in.row_stride = 0;  // packed
    use_boxes(comm, in, plan_outbox());
  }
  std::size_t workspace_size() const { return ws_bytes_; }
  /// Collective on the first call: this rank's buffer of alloc_size() complex elements for the
  /// complex side (fft3d::shared_out). On the direct window in natural order, host memory of one
  /// node, it is a lent node window whose parts the steps address directly.
  std::complex<T>* shared_out();
  const options3d& options() const { return opts_; }
  MPI_Comm comm() const { return comms_.all->mpi(); }

  /// Collective: check(), then perform().
  void execute(bool forward, const void* in, void* out, void* ws, scale s) const {
    check(forward, in, out, ws, s);
    perform(forward, in, out, ws, s);
  }
  /// Collective: execute's argument checks alone (direction, scale, null buffers), in one agreement;
  /// the same error on every rank. A persistent request runs them once, at its init.
  void check(bool forward, const void* in, const void* out, const void* ws, scale s) const;
  /// Collective: the transform, on arguments check() accepted (no agreement of its own).
  void perform(bool forward, const void* in, void* out, void* ws, scale s) const;
  /// The strategy the plan chose from its table (strategy.hpp).
  std::string strategy_name() const;
  const std::vector<candidate>& strategies() const { return table_; }
  const std::vector<double>& measured() const { return measured_; }  // MEASURE's figures (may be empty)

 private:
  struct boxed_io;  // plan3d.cpp
  bool use_own_boxes(MPI_Comm comm, const box3d& in, const box3d& out, boxed_io& io);
  const box3d& plan_inbox() const { return lay_.r2c ? lay_.real_in : lay_.s0; }
  const box3d& plan_outbox() const { return lay_.out; }
  void run(bool forward, const void* in, void* out, void* ws, scale s) const;
  /// The elements execute's in and out must hold on this rank (complex units).
  std::array<std::int64_t, 2> buffer_elems(bool forward) const;
  work_buffers buffers(void* ws) const;

  layout3d lay_;
  options3d opts_;
  grid_comms comms_;
  mpi_comm_ptr agree_;  // where check() agrees (comm_cache.hpp: agreement_comm)
  std::size_t ws_bytes_ = 0;
  work_regions regions_;
  std::unique_ptr<backend_ops<T>> ops_;  // chosen once from the backend tag
  std::vector<std::unique_ptr<step<T>>> fwd_, bwd_;
  std::vector<candidate> table_;
  std::vector<double> measured_;
  strategy strategy_;
  box3d user_in_, user_out_;
  std::unique_ptr<boxed_io> io_;
  // shared_out(): the buffer, and what holds it (a lent window's flag, or plain memory).
  std::complex<T>* shared_out_ = nullptr;
  std::shared_ptr<std::atomic<bool>> shared_busy_;
  aligned_buffer shared_plain_;
};

/// Collective over comm: a MEASURE figure of the steps on this rank. A transform of at least
/// single_run_seconds (strategy.hpp; the slowest rank's) is one run, the first too: where a first
/// run paid for memory touched for the first time, timed_choice's second chance or run-off times it
/// again. A shorter one is the best of two runs, after an untimed one unless `warm` (the steps ran
/// before: a run-off figure).
template <class T>
double time_steps(MPI_Comm comm, const std::vector<std::unique_ptr<step<T>>>& steps, const void* in, void* out,
                  const work_buffers& wb, bool warm = false);

/// Which steps a plan's build makes: MEASURE's candidates forward only, the winner's backward
/// after it (its forward steps are the timed ones), a plan without timing both.
enum class directions { forward, backward, both };

/// MEASURE's figures of a plan's candidates (timed_choice's `time`): each candidate's forward steps
/// are built on its first figure and kept until the choice is made, so that a run-off figure times
/// the same steps again (time_steps, warm) instead of planning them again and warming them up, and
/// the winner's are the plan's own forward steps (take).
template <class T>
class candidate_timer {
 public:
  using steps = std::vector<std::unique_ptr<step<T>>>;
  using build_fn = std::function<void(int, steps&)>;
  /// bytes: each of the planning input and output, cleared here (their first touch not in the
  /// first candidate's figure).
  candidate_timer(MPI_Comm comm, std::size_t candidates, std::size_t bytes, const work_buffers& wb, build_fn build)
      : comm_(comm), built_(candidates), in_(bytes), out_(bytes), wb_(wb), build_(std::move(build)) {
    std::memset(in_.get(), 0, bytes);
    std::memset(out_.get(), 0, bytes);
  }
  double operator()(int i) {
    auto& b = built_.at(static_cast<std::size_t>(i));
    const bool warm = b.has_value();
    if (!warm) build_(i, b.emplace());
    return time_steps(comm_, *b, in_.get(), out_.get(), wb_, warm);
  }
  /// Candidate i's timed forward steps (the plan's own once it is chosen); empty when i was not
  /// timed (the choice came from wisdom, or was the only one).
  std::optional<steps> take(int i) {
    if (i < 0 || static_cast<std::size_t>(i) >= built_.size()) return std::nullopt;
    return std::exchange(built_[static_cast<std::size_t>(i)], std::nullopt);
  }

 private:
  MPI_Comm comm_;
  std::vector<std::optional<steps>> built_;
  aligned_buffer in_, out_;
  work_buffers wb_;
  build_fn build_;
};

/// MEASURE's choice of a plan's strategy (measured_choice: from the wisdom, or timed on the planning
/// buffers by candidate_timer); where the winner was timed, its timed forward steps go to `fwd`, and
/// the plan builds only its backward. build(strategy, fwd, bwd, directions) is the plan's own.
template <class T, class Build>
int measured_plan_choice(MPI_Comm comm, const std::string& key, const std::vector<candidate>& table, std::size_t bytes,
                         const work_buffers& wb, Build& build, std::vector<std::unique_ptr<step<T>>>& fwd,
                         std::vector<double>* seconds) {
  candidate_timer<T> timer(comm, table.size(), bytes, wb, [&](int i, std::vector<std::unique_ptr<step<T>>>& f) {
    std::vector<std::unique_ptr<step<T>>> b;
    build(table[static_cast<std::size_t>(i)].s, f, b, directions::forward);
  });
  const int choice = measured_choice(comm, key, table, std::ref(timer), seconds);
  if (auto timed = timer.take(choice)) fwd = std::move(*timed);
  return choice;
}

}  // namespace toru::fft::detail
