// SPDX-License-Identifier: BSD-3-Clause
// CPU-GPU data parallelism (CGDP): the workers (one MPI rank per device; on CPU-only machines the
// rank itself stands for the device) run forward and backward; the host aggregates the gradients
// and applies the optimizer step, chunk by chunk, while backward is still running.
//
// Chunks: the model's layers (parameter slots grouped by the forward op that reads them) are split
// into consecutive groups. The last layer (output side, whose gradient backward finishes first) is
// always a chunk of its own and the first to be synchronised; the other layers form chunks of the
// sizes given, input side first. Chunk 0 is the input-side chunk: its gradients come last and its
// weights are needed first, the unavoidable tail of every step.
//
// Dataflow per step and chunk c (backward order):
//   1. The worker copies c's gradients into its slot of a node-shared window
//      (MPI_Win_allocate_shared on the node communicator) and publishes "chunk c of step n ready".
//   2. Host helper threads, one per rank, each owning the local_rank-th of P_node equal element
//      ranges of c, sum the node's P_node copies in local-rank order (a plain vectorisable loop);
//      with several nodes they allgather the node sums over the ranks of the same local rank and
//      add them in node order; then divide by P.
//   3. cgdp: the helper applies the optimizer step to the master weights (node-shared window; the
//      optimizer state of a range lives with the helper that owns it). cgdp-sum (BytePS's split):
//      the averaged gradient stays in the window and each worker applies the step to its replica.
//   4. In its next forward the worker waits for each chunk when the forward reaches the first op
//      that reads it (a forward hook, forward_hook.hpp, calling before_forward_op) and copies its
//      new weights (or its averaged gradient, then steps) into its model: it never waits for a
//      chunk whose forward has not started. acquire_weights takes every chunk not yet taken (the
//      final weights, checkpoints, or a forward without the hook).
//
// Equality: on one node the element sum is ((g_0 + g_1) + ...) + g_{P-1}, then / P, the same
// association as data_parallel's ordered reduction, and the update is the optimizer's own code on
// sub-ranges (element-wise), so cgdp, cgdp-sum and the allreduce engine (reduction::ordered) give
// bit-identical weights for every chunking. With several nodes the sum is associated per node
// ((g_0 + g_1) + (g_2 + g_3)), which differs from the allreduce engine by rounding only.
//
//   toru::train::cgdp eng(comm, m.parameters(), m.parameter_data(), opt_options, {.chunk_layers = 2});
//   toru::train::set_forward_hook(m, [&](int op) { eng.before_forward_op(op, m.parameter_data()); });
//   for (step...) {
//     m.parameters_changed();
//     m.forward(...);  // takes each chunk of the last step's update as the forward reaches it
//     eng.begin_step(step, lr, m.gradient_data());
//     m.backward([&](int slot) { eng.gradient_ready(slot); });
//   }
//   eng.acquire_weights(m.parameter_data());  // the final weights
//   toru::train::set_forward_hook(m, {});
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "toru/comm/communicator.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"

namespace toru::train {

/// The trainer's engines. auto_select: the cost model picks (and measurement with --tune).
enum class engine_kind { allreduce, cgdp, cgdp_sum, auto_select };
std::string_view to_string(engine_kind e) noexcept;
/// "allreduce", "cgdp", "cgdp-sum", "auto"; throws errc::invalid_argument naming `argument`.
engine_kind parse_engine(std::string_view name, std::string_view argument = "engine");

/// A layer: the consecutive parameter slots read first by one forward op.
struct model_layer {
  int first_slot = 0, last_slot = 0;
  int op = -1;              // the forward op (graph op id)
  std::int64_t offset = 0;  // element range in the flat buffers
  std::int64_t count = 0;
};
/// Layers in slot order. Throws errc::invalid_argument when slots are not laid out consecutively
/// (each slot's offset the previous slot's end), which chunks rely on.
std::vector<model_layer> group_layers(std::span<const parameter_slot> slots);

struct chunk {
  int first_layer = 0, last_layer = 0;  // inclusive
  int first_slot = 0, last_slot = 0;
  std::int64_t offset = 0;  // element range in the flat buffers
  std::int64_t count = 0;
};

/// Chunk sizes (in layers, input side first) for L layers with every chunk but the last-layer
/// one holding `chunk_layers` layers; the remainder goes to the input-side chunk (a short tail).
/// chunk_layers must be in 1..max(1, L - 1): throws errc::invalid_argument naming "chunk_layers".
std::vector<int> uniform_chunking(int layers, int chunk_layers);
/// Chunks from sizes (input side first, summing to L - 1); the last layer is appended as its own
/// chunk. Throws errc::invalid_argument naming "chunk sizes" for a size < 1 or a wrong total.
std::vector<chunk> make_chunks(std::span<const model_layer> layers, std::span<const int> sizes);
/// "3+3+2+1|1": the sizes, then the last layer.
std::string describe_chunking(std::span<const int> sizes);

struct cgdp_options {
  int chunk_layers = 1;                 // uniform chunk size (layers), used when `chunk_sizes` is empty
  std::vector<int> chunk_sizes{};       // explicit sizes, input side first (this rank's proposal)
  bool host_update = true;              // true: cgdp (host steps); false: cgdp-sum (workers step)
  int ranks_per_node = 0;               // 0: the node is MPI_COMM_TYPE_SHARED; > 0: emulate nodes (tests)
  bool bind_helpers = true;             // hwloc: helpers on cores no local worker is bound to
  std::uint64_t host_memory_bytes = 0;  // the node's host memory budget; 0: MemAvailable
  // memory_space::device: the cudaStream_t the model computes on (device_compute_stream()), whose
  // work waits on each chunk's weights event; nullptr: the host waits for the copies instead.
  void* compute_stream = nullptr;
  // Instrumentation (tests): called on the worker thread once chunk c's update has landed, just
  // before the worker takes it; a test records the order or blocks in it to hold one chunk back.
  std::function<void(std::size_t chunk)> on_take{};
};

/// The cudaStream_t (as void*) a CUDA-backend model computes on; nullptr for other models or in
/// builds without the CUDA backend.
void* device_compute_stream(model& m);

/// What one chunk cost in the last step, for --explain.
struct chunk_stats {
  double wait_seconds = 0;     // worker: blocked in acquire_weights for this chunk
  double post_seconds = 0;     // worker: copying the gradients out
  double copy_in_seconds = 0;  // worker: weights (or averaged gradient + step) in
  double host_seconds = 0;     // this rank's helper: sum + (reduce) + update of its range
};

class cgdp {
 public:
  /// Collective over comm.mpi(). Checks every rank's proposal (chunk sizes in range), then adopts
  /// rank 0's chunking (a rank proposing another one is overruled: overruled() says so) and
  /// checks that every rank holds it. Checks the host memory for master weights, optimizer state
  /// and the gradient window (errc::out_of_memory saying how much is needed), that every node
  /// has as many ranks, and that several nodes come with MPI_THREAD_MULTIPLE. `params`: the
  /// initial weights (the same on every rank), in `space`. memory_space::device (a CUDA model):
  /// gradients leave through pinned window memory on a copy stream and weights return on a
  /// second one (cgdp_device.hpp); errc::no_device on every rank when a rank sees no GPU,
  /// errc::unsupported without CUDA in this build or with host_update off (cgdp-sum steps on the
  /// host's buffers).
  cgdp(const comm::communicator& comm, std::span<const parameter_slot> slots, memory_space space,
       std::span<const float> params, const optimizer_options& optimizer, const cgdp_options& options = {});
  ~cgdp();
  cgdp(const cgdp&) = delete;
  cgdp& operator=(const cgdp&) = delete;

  const std::vector<chunk>& chunks() const noexcept { return chunks_; }
  const std::vector<int>& chunk_sizes() const noexcept { return sizes_; }
  const std::vector<model_layer>& layers() const noexcept { return layers_; }
  bool overruled() const noexcept { return overruled_; }
  bool host_update() const noexcept { return options_.host_update; }
  int nodes() const noexcept { return nodes_; }
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// Where this rank's helper thread was bound, and why ("core 3 (no worker bound there)" or
  /// "unbound: ...").
  const std::string& binding() const noexcept { return binding_; }

  /// Takes every chunk of the previous step's update not yet taken by before_forward_op, in
  /// forward order: waits for it and writes its new weights into `params` (device: queues each
  /// chunk's copy; the compute stream waits on it). No-op before the first step and when the
  /// forward took them all. Returns the seconds spent waiting.
  double acquire_weights(std::span<float> params);
  /// The forward hook (forward_hook.hpp): before forward op `op`, takes the chunks (in forward
  /// order) whose first reading op is at or before `op`, as acquire_weights does; the others are
  /// left for later ops. Returns the seconds spent waiting.
  double before_forward_op(int op, std::span<float> params);
  /// The seconds waited for the previous step's update since the last begin_step (over the calls
  /// that took its chunks: the forward hook's and acquire_weights').
  double last_wait_seconds() const noexcept { return step_wait_; }
  /// Starts step `step` with learning rate `lr`; `gradients` is the model's flat gradient buffer.
  /// Requires every chunk of the last step's update taken (the forward hook or acquire_weights).
  void begin_step(std::int64_t step, double lr, std::span<float> gradients);
  /// From backward: when the last slot of a chunk is final, posts the chunk to the host.
  void gradient_ready(int slot);
  /// Posts what backward did not report (a slot without a gradient path).
  void end_backward();

  const std::vector<chunk_stats>& last_stats() const noexcept { return stats_; }

  /// Collective, between steps (after acquire_weights): the optimizer state of the whole model in
  /// optimizer::state()'s layout over the slots' extent, gathered from the helpers that own its
  /// ranges (cgdp) or the workers' (cgdp-sum), the same on every rank, with the steps taken. With
  /// the weights acquire_weights writes, this is what a checkpoint needs.
  std::vector<float> optimizer_state(std::int64_t& steps);
  /// Collective, between steps: the inverse (resume). `state` as optimizer_state() returns it;
  /// throws errc::invalid_argument on a wrong size.
  void set_optimizer_state(std::span<const float> state, std::int64_t steps);

  struct impl;

 private:
  void post(std::size_t c);
  double take(std::size_t c, std::span<float> params);  // waits for chunk c's update, writes it

  cgdp_options options_;
  std::vector<parameter_slot> slots_;
  std::vector<model_layer> layers_;
  std::vector<int> sizes_;
  std::vector<chunk> chunks_;
  std::vector<int> chunk_of_slot_;
  std::vector<int> pending_;
  std::vector<int> first_op_;  // per chunk: the forward op that first reads it
  std::size_t taken_ = 0;      // chunks of the previous step's update taken so far (forward order)
  double step_wait_ = 0;
  bool overruled_ = false;
  int nodes_ = 1, local_rank_ = 0, local_size_ = 1, nranks_ = 1;
  std::string binding_;
  std::span<float> grads_;
  std::int64_t steps_begun_ = 0, steps_acquired_ = 0;
  std::vector<chunk_stats> stats_;
  std::unique_ptr<impl> impl_;
};

}  // namespace toru::train
