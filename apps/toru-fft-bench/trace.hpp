// SPDX-License-Identifier: BSD-3-Clause
// toru-fft-bench --trace DIR: every toru event (toru/core/events.hpp) of the traced transforms, with
// a timestamp, into DIR/trace.<rank>.csv, so that the per-chunk timeline of an exchange (when each
// chunk's phase A and B is posted and completes, when its hook and local FFTs run) can be read
// across ranks. The clock is steady_clock (CLOCK_MONOTONIC): one clock for every process of one
// kernel, so the ranks of the emulated torus (namespaces of one host) share it.
#pragma once

#include <cstdint>
#include <string>

namespace toru_fft_bench {

/// Starts recording into this process's buffer (installs the events sink). Not reentrant.
void trace_begin();
/// Stops recording (removes the sink).
void trace_end();
/// Marks the start of transform `label` (a string literal) of `points` points, number `index`.
void trace_mark(const char* label, std::uint64_t points, int index);
/// Writes DIR/trace.<rank>.csv (t_ns,thread,kind,name,detail,bytes,value) and clears the buffer.
void trace_write(const std::string& dir, int rank);

}  // namespace toru_fft_bench
