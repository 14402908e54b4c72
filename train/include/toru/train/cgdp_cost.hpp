// SPDX-License-Identifier: BSD-3-Clause
// Cost model of one training step for the allreduce engine and for CGDP (toru/train/cgdp.hpp), per
// layer and per chunk. Pure functions of measured (or assumed) costs, so the same model serves
// `toru-train --explain` (costs measured on this machine) and the simulation of the published
// results (FLOP counts at a device rate, toru-cgdp-sim).
//
// Timeline of a step (per worker; layers 0..L-1 input side first):
//   forward F = sum f_l, then backward from layer L-1 down; chunk c's gradients are final when
//   backward has passed its first layer.
//   allreduce: bucket k's reduction starts when it is ready and the previous one has ended and
//     takes latency + 2 (p-1)/p s_k / bw_ar (at allreduce_overlap of that rate while backward
//     still computes); the update s * u_worker follows the last reduction.
//     step = F + max(B, end of the last reduction) + S u_worker.
//   CGDP: the chunk leaves the worker (s_c / bw_d2h: on a CPU worker its own copy, which delays
//     its backward; on a GPU a DMA on the worker's link, serialised per link) plus a per-sync
//     overhead o; the host (one pipeline, chunks in backward order) sums p copies
//     (p s_c / bw_sum), reduces across nodes, updates (s_c u_host; cgdp-sum: none), and the
//     weights go back (s_c / bw_h2d; cgdp-sum: plus s_c u_worker on the worker). The next forward
//     of chunk c starts when its weights are back. The tail is what the next forward waits:
//     chunk 0 (input side) is finished last and needed first, so at least
//     d2h(C_0) + host(C_0) + h2d(C_0) is never hidden.
//     step = F + B (+ CPU posting) + tail.
//   Contention (machine_model::cores): with fewer free cores than helpers, a share x of the
//     helpers computes on the workers' cores; each chunk's host time h (but the input-side
//     chunk's) then also delays backward by x h. A chunk posted while backward goes on reaches
//     its helper after the contended handoff, but no later than a free-core handoff after
//     backward ends (the workers then only wait); the input-side chunk, posted at the end of
//     backward, always costs the free-core handoff. With more compute threads than cores, a CPU
//     worker's posting copy runs at cores / threads of the free-core rate (it shares the cores
//     with the other workers' compute, which the measured layer times already include).
//   Rates are what each phase sees when it runs: d2h a free core's (one worker posts while the
//   others compute), h2d and worker updates every worker's at once, host sum and update the
//   node's helpers all at once (toru-train measures each so; cgdp_run.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace toru::train {

struct layer_cost {
  double forward = 0;      // seconds
  double backward = 0;     // seconds
  std::int64_t bytes = 0;  // parameter bytes (fp32)
};

struct machine_model {
  int workers = 1;  // per node
  int nodes = 1;
  bool copies_on_worker = true;        // CPU workers copy their own gradients (not overlapped)
  double d2h_bytes_per_s = 10e9;       // per worker link, effective (CPU workers: one copy on a free core)
  double h2d_bytes_per_s = 10e9;       // per worker (CPU workers: while every worker copies at once)
  double host_sum_bytes_per_s = 10e9;  // the node's sum: workers x chunk bytes per second, all helpers at once
  double host_update_s_per_byte = 1e-10;
  double worker_update_s_per_byte = 1e-10;
  double sync_overhead_s = 20e-6;  // per chunk and step, a free core waiting for the handoff
  // Host-thread contention. The node's workers (worker_threads compute threads each) and their
  // helpers (one each) share `cores`; 0: a core for every thread. Helpers without a free core of
  // their own run on the workers' cores: their host work stretches the workers' backward by the
  // share of helpers left without a core, and a handoff during backward costs contended_sync_s
  // (a woken thread waits for a time slice) instead of sync_overhead_s.
  int cores = 0;
  int worker_threads = 1;
  double contended_sync_s = 0;          // measured with busy threads on every core; 0: sync_overhead_s
  double allreduce_bytes_per_s = 10e9;  // algorithm bandwidth between workers (bus bandwidth)
  double allreduce_latency_s = 20e-6;   // per bucket
  // Share of the reduction rate kept while backward computes (1: a DMA engine or NCCL moves it
  // beside the compute). CPU workers progress MPI only in the engine's calls, on their own cores.
  double allreduce_overlap = 1;
  double internode_bytes_per_s = 10e9;  // CGDP's host-to-host reduction
};

struct chunk_prediction {
  int first_layer = 0, last_layer = 0;
  std::int64_t bytes = 0;
  double ready = 0;          // backward time at which its gradients are final
  double post = 0;           // the worker's time to post it (a CPU worker's copy; 0 on a DMA link)
  double host_start = 0;     // host begins the sum
  double host_end = 0;       // sum + reduce + update done
  double weights_ready = 0;  // weights (or averaged gradient) back on the worker
  double stall = 0;          // how long the next forward waits for this chunk
};

struct step_prediction {
  std::string engine;
  double helpers_without_core = 0;   // CGDP: share of the helpers that run on the workers' cores
  double forward = 0, backward = 0;  // backward includes the CPU workers' posting copies
  double exposed = 0;                // communication/update not hidden behind compute
  double tail = 0;                   // CGDP: the next forward's wait (sum of stalls)
  double update = 0;                 // allreduce: the worker's update
  double step = 0;
  std::vector<chunk_prediction> chunks;  // CGDP: per chunk (input side first); allreduce: per bucket
};

step_prediction predict_allreduce(std::span<const layer_cost> layers, const machine_model& m,
                                  std::int64_t bucket_bytes = 25 << 20, std::int64_t first_bucket_bytes = 1 << 20);
/// `sizes`: chunk sizes in layers, input side first, summing to L - 1 (the last layer is its own
/// chunk), as toru::train::make_chunks takes them.
step_prediction predict_cgdp(std::span<const layer_cost> layers, const machine_model& m, std::span<const int> sizes,
                             bool host_update = true);

struct chunking_choice {
  int chunk_layers = 1;  // uniform size (toru::train::uniform_chunking)
  std::vector<int> sizes;
  step_prediction prediction;
};
/// The uniform chunk size the model predicts fastest (ties: the larger chunk, fewer syncs).
chunking_choice best_uniform_chunking(std::span<const layer_cost> layers, const machine_model& m,
                                      bool host_update = true);

}  // namespace toru::train
