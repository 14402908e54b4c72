// SPDX-License-Identifier: BSD-3-Clause
// A viewer over plain TCP, for scripts, tests and benchmarks (toru-view --dump uses it): it keeps a
// playout buffer, plays one frame per 1/fps on its own clock (ticks at fixed instants from the
// start; never paced by arrivals) once the start-up buffer is full (live: latency_s x fps frames
// within [low_water, high_water - 1], the target the sender aims at; a replay: low_water; again
// after a stall; or when nothing has arrived for a second: the stream paused or ended), reports
// its buffer level, position and frames received four times a second, and measures what a person
// watching would see: stalls (a playout tick with an empty buffer after start-up) and the jitter
// of the playout instants. buffer_log, if set, gets one CSV line per report (the level over time).
//
// playout = false is the benchmark baseline: every frame is "played" the moment it arrives.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toru/stream/frame.hpp"

namespace toru::stream {

struct viewer_options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string from = "live";  // "live" or a seq to replay from
  double fps = 10;
  int low_water = 3, high_water = 10;
  double latency_s = 1.0;  // live: play this far behind the newest frame (the start-up buffer)
  std::string buffer_log = {};
  std::string policy = {};  // empty: the stream's
  bool playout = true;
  double seconds = 0;            // stop after this long (0: no limit)
  std::uint64_t max_frames = 0;  // stop after playing this many (0: no limit)
  double idle_timeout_s = 10;    // stop when nothing arrives for this long
  std::size_t max_message_bytes = 1u << 30;
};

struct viewer_stats {
  std::uint64_t received = 0, played = 0, stalls = 0, skipped = 0;  // skipped: as the server reported
  std::uint64_t downscaled = 0;                                     // frames received at reduced resolution
  int start_frames = 0;                                             // the start-up buffer
  int min_buffer = 0;                                               // the lowest level at a playout tick after start-up
  double start_s = 0, first_play_s = 0;
  double jitter_mean_ms = 0, jitter_max_ms = 0;  // |interval - 1/fps| between plays after start-up
  double interval_mean_ms = 0;
  std::string stop_reason;
};

/// Connects, says hello, plays until a limit; calls on_play(message, header) for each frame
/// played (return false to stop). Throws toru::error(io) if it cannot connect.
viewer_stats run_viewer(const viewer_options& opt,
                        const std::function<bool(const std::string&, const frame_header&)>& on_play);

}  // namespace toru::stream
