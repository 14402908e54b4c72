// SPDX-License-Identifier: BSD-3-Clause
// The trainer's CGDP glue: per-layer timers, calibrating the cost model on this machine, and the
// chunk search's cache (chunk_cache.cpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toru/train/cgdp.hpp"
#include "toru/train/cgdp_cost.hpp"
#include "toru/train/model.hpp"

namespace toru::train::detail {

/// Per-layer forward/backward seconds summed over steps (op times attributed to the layer whose
/// parameters the op reads, or the nearest parameterised op before it).
struct layer_timer {
  std::vector<toru::train::layer_cost> sum;
  int steps = 0;
  void add(toru::train::model& m, const std::vector<toru::train::model_layer>& layers);
  std::vector<toru::train::layer_cost> mean() const;
};

/// Collective: measures this machine's copy, host-sum, update and reduction rates for a model of
/// `bytes` parameter bytes on comm (max over ranks), and returns the machine model.
toru::train::machine_model calibrate(MPI_Comm comm, std::int64_t bytes, int local_size, int nodes,
                                     const toru::train::optimizer_options& opt);

/// The chunk size cached for this key, or 0. Key: model, batch, ranks, host, hardware threads.
int cached_chunk(const std::string& file, const std::string& key);
void store_chunk(const std::string& file, const std::string& key, int chunk, const std::string& log);
std::string cache_key(const std::string& model, std::int64_t batch, int nranks);
std::string default_cache_file();

}  // namespace toru::train::detail
