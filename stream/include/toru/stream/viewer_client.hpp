// A viewer over plain TCP, for scripts, tests and benchmarks (toru-view --dump uses it): it keeps a
// playout buffer, plays one frame per 1/fps once low_water frames are buffered (the start-up
// buffer), reports its buffer level and position four times a second, and measures what a person
// watching would see: stalls (a playout tick with an empty buffer after start-up) and the jitter
// of the playout instants.
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
  std::string policy = {};  // empty: the stream's
  bool playout = true;
  double seconds = 0;            // stop after this long (0: no limit)
  std::uint64_t max_frames = 0;  // stop after playing this many (0: no limit)
  double idle_timeout_s = 10;    // stop when nothing arrives for this long
  std::size_t max_message_bytes = 1u << 30;
};

struct viewer_stats {
  std::uint64_t received = 0, played = 0, stalls = 0, skipped = 0;  // skipped: as the server reported
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
