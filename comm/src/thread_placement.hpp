// SPDX-License-Identifier: BSD-3-Clause
// Where the communication thread of a rank runs: inside the CPU set the rank was bound to (by mpirun's
// --bind-to, taskset, a batch system's cgroup), never on another rank's cores.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace toru::comm::detail {

/// A 64-bit digest of the calling thread's CPU affinity mask: ranks of one node with equal digests
/// share one CPU set and split its cores between their threads.
std::uint64_t affinity_digest();

/// Pure choice, given the logical indices of the cores the rank may run on (`allowed`, ascending) and
/// its position among the `sharing` ranks of the node bound to the same set: the last core of this
/// rank's equal slice of `allowed`, so the rank's main thread keeps the slice's first core. -1 (leave
/// the thread where it inherits the rank's binding) when the set has fewer than two cores per sharing
/// rank: a thread bound there would stack onto another thread's core.
int choose_thread_core(const std::vector<int>& allowed, int index, int sharing);

/// What the phase thread runs first: binds the calling thread to the chosen core of the caller's
/// current binding (computed now, in the calling thread, whose binding the rank's), or nothing. Never
/// throws; a failed binding is logged at debug level.
std::function<void()> thread_binder(int index, int sharing);

}  // namespace toru::comm::detail
