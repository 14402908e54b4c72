// SPDX-License-Identifier: BSD-3-Clause
// The NCCL side of the data-parallel engine, in its own translation unit so that a build without
// NCCL compiles nccl_reducer_none.cpp instead (no #ifdef in the engine).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "toru/comm/communicator.hpp"

namespace toru::train::detail {

struct nccl_reducer;
struct nccl_reducer_deleter {
  void operator()(nccl_reducer* r) const noexcept;
};
using nccl_reducer_ptr = std::unique_ptr<nccl_reducer, nccl_reducer_deleter>;

/// Whether this build has NCCL.
bool nccl_available() noexcept;
/// Collective over comm: comm's NCCL communicator (comm::nccl_communicator) on the current device.
/// errc::unsupported without NCCL.
nccl_reducer_ptr make_nccl_reducer(const comm::communicator& comm);
/// Enqueues the in-place average of `count` device floats over the ranks (after the device's
/// pending work, which produced them).
void nccl_average(nccl_reducer& r, float* device_data, std::int64_t count);
/// Waits for everything enqueued.
void nccl_wait(nccl_reducer& r);

}  // namespace toru::train::detail
