// SPDX-License-Identifier: BSD-3-Clause
// Per-viewer flow control: pure logic on a caller-supplied clock, so it is unit-tested with a
// simulated one (tests/stream/flow_control_test.cpp) and run by the server on the real one.
//
// The viewer plays frames at `fps` from a playout buffer and reports its buffer level (frames)
// and playout position (seq). The sender estimates the buffer between reports (reported level
// + frames sent since - fps x elapsed), paces at the playout rate, sends faster (fill_boost) below
// the low water mark and holds at the high water mark, so the buffer stays between the marks
// (Negishi et al., INFOCOM '96; IBM US5918020: pace slightly above the media rate, hold at a
// threshold). It never queues more than max_buffered_bytes on the connection.
//
// A live viewer joins latency_s behind the newest frame (the frames are in the cache or the
// recording, so the sender fills its start-up buffer at fill_boost x fps instead of waiting for the
// producer) and the sender keeps its buffer at that target: with producer rate = playout rate the
// viewer's buffer can never grow past what it joined with, so the target is what absorbs a link
// hiccup. The estimate counts frames in flight (sent, not yet received by the viewer as its reports
// say) as buffered, so a slow link holds the sender instead of filling the socket.
//
// A live viewer that cannot keep up (its link is too slow, or the producer outruns its playout)
// falls behind the newest frame; past lag_limit frames the policy adapts what is sent:
//   skip_to_latest  jump to the newest step (its first frame, so a step's frames stay together)
//   decimate        send one step in k (k doubles while the viewer lags, halves once it keeps up)
//   reduce_resolution  send 2-D frames box-averaged by s per axis (s doubles while the viewer lags,
//                   up to max_downscale, halves once it keeps up; the server transcodes)
//   catch_up        never skip: every frame, in order, from the recording (lossless; the viewer lags)
// A replay (not live) is always lossless, paced at fps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace toru::stream {

enum class adapt_policy { skip_to_latest, decimate, catch_up, reduce_resolution };
std::string_view to_string(adapt_policy p) noexcept;
adapt_policy parse_adapt_policy(std::string_view name, std::string_view argument = "policy");

struct flow_options {
  double fps = 10;      // playout rate the viewer plays at (a viewer may report its own)
  int low_water = 3;    // frames: below, send at fps x fill_boost
  int high_water = 10;  // frames: at or above, hold
  double fill_boost = 2.0;
  // Live: join this far behind the newest frame and keep this much buffered (seconds; as frames
  // clamped to [low_water, high_water - 1]; 0: low_water frames).
  double latency_s = 1.0;
  adapt_policy policy = adapt_policy::skip_to_latest;
  int lag_limit = 0;  // frames behind the newest before adapting (0: high_water)
  int max_decimation = 16;
  int max_downscale = 8;                      // reduce_resolution: largest factor per axis
  std::size_t max_buffered_bytes = 4u << 20;  // bytes queued on the connection at most
};

/// What the controller needs to know about the frames available (the recording or the cache).
class frame_index {
 public:
  virtual ~frame_index() = default;
  /// Frames [first(), end()) can be sent.
  virtual std::uint64_t first() const = 0;
  virtual std::uint64_t end() const = 0;
  virtual std::int64_t step_of(std::uint64_t seq) const = 0;
  /// First seq >= from with step >= step (end() if none).
  virtual std::uint64_t first_at_step(std::int64_t step, std::uint64_t from) const = 0;
};

struct flow_decision {
  enum kind_t { send, wait, idle } kind = idle;  // idle: nothing to send until a new frame arrives
  std::uint64_t seq = 0;                         // send: this frame
  double at = 0;                                 // wait: ask again at this time (s)
  int scale = 1;                                 // send: 2-D frames reduced by this factor per axis
};

struct flow_counters {
  std::uint64_t sent = 0, skipped = 0, held = 0, congested = 0;
  int decimation = 1;
  int scale = 1;  // reduce_resolution: current factor per axis
};

class flow_controller {
 public:
  /// live: start at the newest step; else replay from `from`.
  flow_controller(const flow_options& opt, bool live, std::uint64_t from = 0);

  /// A viewer report at time `now` (s): frames buffered, the seq it is playing, its playout rate
  /// (0: keep), and the frames it has received on this connection (-1: unknown; then frames in
  /// flight are only those sent since the report).
  void report(double now, int buffer, std::uint64_t position, double fps, std::int64_t received = -1);
  /// Seek: replay from seq (live = false), or back to live.
  void seek(std::uint64_t seq, bool live);
  /// Viewer paused: its playout stops, so the estimate stops draining until the next report.
  void pause(bool paused) { paused_ = paused; }

  /// What to do now, given what is available and how many bytes the connection holds.
  flow_decision next(double now, const frame_index& frames, std::size_t buffered_bytes);
  /// The frame next() chose was handed to the connection at `now`.
  void sent(double now, std::uint64_t seq);

  double estimated_buffer(double now) const;
  /// The buffer level (frames) the sender aims at: latency_s x fps within the water marks.
  int target_frames() const;
  bool live() const { return live_; }
  std::uint64_t cursor() const { return cursor_; }
  double fps() const { return fps_; }
  const flow_counters& counters() const { return c_; }
  const flow_options& options() const { return opt_; }

 private:
  void adapt(double now, const frame_index& frames);
  void skip_decimated(const frame_index& frames);

  flow_options opt_;
  bool live_, started_ = false, paused_ = false;
  std::uint64_t cursor_;
  double fps_;
  double report_time_ = 0, last_send_ = -1e300, last_adapt_ = -1e300;
  int report_buffer_ = 0;
  std::uint64_t sent_since_report_ = 0;
  std::int64_t report_received_ = -1;
  std::int64_t group_step_ = INT64_MIN, skipping_step_ = INT64_MIN;
  std::uint64_t groups_ = 0;
  flow_counters c_;
};

}  // namespace toru::stream
