// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/cgdp_cost.hpp"

#include <algorithm>
#include <string>

#include "toru/core/error.hpp"
#include "toru/train/cgdp.hpp"

namespace toru::train {

namespace {

double sum_forward(std::span<const layer_cost> layers) {
  double f = 0;
  for (const auto& l : layers) f += l.forward;
  return f;
}

}  // namespace

step_prediction predict_allreduce(std::span<const layer_cost> layers, const machine_model& m, std::int64_t bucket_bytes,
                                  std::int64_t first_bucket_bytes) {
  step_prediction p;
  p.engine = "allreduce";
  p.forward = sum_forward(layers);
  const int ranks = m.workers * m.nodes;
  const double factor = ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0;
  // Buckets at layer granularity in backward order, as data_parallel fills them from slots.
  double t = 0, comm_free = 0;
  std::int64_t bytes = 0, total = 0;
  int first = static_cast<int>(layers.size()) - 1, last = first, buckets = 0;
  double backward_end = 0;
  for (const auto& l : layers) backward_end += l.backward;
  const double overlap = std::clamp(m.allreduce_overlap, 0.0, 1.0);
  auto flush = [&](double ready) {
    const double start = std::max(ready, comm_free);
    const double dur =
        ranks > 1 ? m.allreduce_latency_s + factor * static_cast<double>(bytes) / m.allreduce_bytes_per_s : 0;
    // While backward computes the reduction keeps `overlap` of its rate, the full rate after.
    const double during = std::max(0.0, backward_end - start);
    comm_free = dur <= 0                                 ? start
                : overlap > 0 && overlap * during >= dur ? start + dur / overlap
                                                         : std::max(start, backward_end) + dur - overlap * during;
    p.chunks.push_back({.first_layer = first,
                        .last_layer = last,
                        .bytes = bytes,
                        .ready = ready,
                        .host_start = start,
                        .host_end = comm_free,
                        .weights_ready = comm_free});
    ++buckets;
    bytes = 0;
  };
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const auto& lc = layers[static_cast<std::size_t>(l)];
    const std::int64_t cap = buckets == 0 ? first_bucket_bytes : bucket_bytes;
    if (bytes > 0 && bytes + lc.bytes > cap) flush(t);
    if (bytes == 0) last = l;
    t += lc.backward;
    first = l;
    bytes += lc.bytes;
    total += lc.bytes;
  }
  if (bytes > 0) flush(t);
  std::reverse(p.chunks.begin(), p.chunks.end());
  p.backward = t;
  p.update = static_cast<double>(total) * m.worker_update_s_per_byte;
  p.exposed = std::max(0.0, comm_free - t);
  p.step = p.forward + std::max(t, comm_free) + p.update;
  return p;
}

step_prediction predict_cgdp(std::span<const layer_cost> layers, const machine_model& m, std::span<const int> sizes,
                             bool host_update) {
  // Chunk boundaries from the sizes (validated as make_chunks does).
  std::vector<model_layer> ml(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l)
    ml[l] = {.first_slot = static_cast<int>(l), .last_slot = static_cast<int>(l), .op = static_cast<int>(l)};
  const auto chunks = make_chunks(ml, sizes);
  step_prediction p;
  p.engine = host_update ? "cgdp" : "cgdp-sum";
  p.forward = sum_forward(layers);
  const int ranks = m.workers * m.nodes;
  const double inter = m.nodes > 1 ? 2.0 * (m.nodes - 1) / m.nodes : 0;
  p.chunks.resize(chunks.size());
  // Contention: helpers beyond the cores the workers leave free share the workers' cores.
  double stolen = 0, busy_sync = m.sync_overhead_s, share = 1;
  if (m.cores > 0) {
    const int threads = m.workers * std::max(1, m.worker_threads);
    const int spare = m.cores - threads;
    if (spare < m.workers) {
      stolen = static_cast<double>(m.workers - std::max(spare, 0)) / m.workers;
      if (m.contended_sync_s > 0) busy_sync = m.contended_sync_s;
    }
    // A CPU worker posts its chunk while the other workers compute: with more compute threads
    // than cores it gets cores/threads of the free-core rate d2h_bytes_per_s (the measured layer
    // times already include the sharing of compute).
    if (m.copies_on_worker) share = std::max(1.0, static_cast<double>(threads) / m.cores);
  }
  p.helpers_without_core = stolen;
  // Host time per chunk: the sum of the node's copies, the reduction across nodes, the update.
  std::vector<double> host(chunks.size(), 0.0);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    auto& cp = p.chunks[c];
    cp.first_layer = chunks[c].first_layer;
    cp.last_layer = chunks[c].last_layer;
    for (int l = cp.first_layer; l <= cp.last_layer; ++l) cp.bytes += layers[static_cast<std::size_t>(l)].bytes;
    const double s = static_cast<double>(cp.bytes);
    host[c] = m.workers * s / m.host_sum_bytes_per_s;
    if (m.nodes > 1) host[c] += inter * s / m.internode_bytes_per_s;
    if (host_update) host[c] += s * m.host_update_s_per_byte;
  }
  // Backward, chunk by chunk in backward order: when each chunk is posted, and when backward ends.
  // Host work that overlaps the rest of backward takes its share of the workers' cores (not the
  // input-side chunk's: backward has ended and the workers wait).
  double t = 0;
  std::vector<double> posted(chunks.size(), 0.0);
  for (std::size_t c = chunks.size(); c-- > 0;) {
    auto& cp = p.chunks[c];
    for (int l = cp.last_layer; l >= cp.first_layer; --l) t += layers[static_cast<std::size_t>(l)].backward;
    cp.ready = t;
    // A CPU worker's own copy: backward resumes after it, and the release store that posts the
    // chunk costs the worker nothing more (it never waits for the helper here).
    if (m.copies_on_worker) cp.post = share * static_cast<double>(cp.bytes) / m.d2h_bytes_per_s;
    t += cp.post;
    posted[c] = t;
    if (c > 0) t += stolen * host[c];
  }
  const double backward_end = t;
  // The helpers, one pipeline in backward order. A chunk posted while backward goes on reaches a
  // helper that competes with computing workers (the busy-core handoff), but no later than a
  // free-core handoff after backward ends, when the workers only wait and leave the cores; the
  // input-side chunk is posted then, so it always costs the free-core handoff.
  double link_free = 0, host_free = 0;
  for (std::size_t c = chunks.size(); c-- > 0;) {
    auto& cp = p.chunks[c];
    const double s = static_cast<double>(cp.bytes);
    double at = posted[c];
    if (!m.copies_on_worker) {  // a DMA on the worker's link, serialised per link
      at = std::max(cp.ready, link_free) + s / m.d2h_bytes_per_s;
      link_free = at;
    }
    const double arrived =
        c > 0 ? std::min(at + busy_sync, std::max(at, backward_end) + m.sync_overhead_s) : at + m.sync_overhead_s;
    cp.host_start = std::max(arrived, host_free);
    cp.host_end = cp.host_start + host[c];
    host_free = cp.host_end;
    // On a CPU worker the copy back is its own memcpy, as the next forward reaches the chunk.
    cp.weights_ready = cp.host_end + (m.copies_on_worker ? 0 : s / m.h2d_bytes_per_s);
  }
  p.backward = t;
  // The next forward, chunk by chunk: each waits for its weights (the forward hook).
  double now = t;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    auto& cp = p.chunks[c];
    cp.stall = std::max(0.0, cp.weights_ready - now);
    now += cp.stall;
    const double s = static_cast<double>(cp.bytes);
    // The worker copies the weights in (cgdp-sum: updates them) as every worker does at once:
    // h2d_bytes_per_s and worker_update_s_per_byte are rates under that load.
    if (m.copies_on_worker) now += s / m.h2d_bytes_per_s;
    if (!host_update) now += s * m.worker_update_s_per_byte;
    for (int l = cp.first_layer; l <= cp.last_layer; ++l) now += layers[static_cast<std::size_t>(l)].forward;
    p.tail += cp.stall;
  }
  (void)ranks;
  p.step = now;  // backward end + stalls + copies in + the next forward
  p.exposed = p.step - p.forward - p.backward;
  return p;
}

chunking_choice best_uniform_chunking(std::span<const layer_cost> layers, const machine_model& m, bool host_update) {
  const int L = static_cast<int>(layers.size());
  chunking_choice best;
  bool have = false;
  for (int k = std::max(1, L - 1); k >= 1; --k) {
    auto sizes = uniform_chunking(L, k);
    auto pr = predict_cgdp(layers, m, sizes, host_update);
    if (!have || pr.step < best.prediction.step * (1 - 1e-9)) {
      best = {k, std::move(sizes), std::move(pr)};
      have = true;
    }
  }
  return best;
}

}  // namespace toru::train
