// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/flow_control.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::stream {

std::string_view to_string(adapt_policy p) noexcept {
  switch (p) {
    case adapt_policy::skip_to_latest:
      return "skip";
    case adapt_policy::decimate:
      return "decimate";
    case adapt_policy::catch_up:
      return "catch-up";
    case adapt_policy::reduce_resolution:
      return "resolution";
  }
  return "?";
}

adapt_policy parse_adapt_policy(std::string_view name, std::string_view argument) {
  for (auto p :
       {adapt_policy::skip_to_latest, adapt_policy::decimate, adapt_policy::catch_up, adapt_policy::reduce_resolution})
    if (name == to_string(p)) return p;
  throw error(errc::invalid_argument,
              fmt::format("{}: expected skip, decimate, resolution or catch-up, got '{}'", argument, name));
}

flow_controller::flow_controller(const flow_options& opt, bool live, std::uint64_t from)
    : opt_(opt), live_(live), cursor_(from), fps_(opt.fps) {
  expect(opt.fps > 0 && opt.fps <= 1000, "flow.fps", "0 < fps <= 1000", std::to_string(opt.fps));
  expect(opt.low_water >= 1 && opt.high_water > opt.low_water, "flow.low_water/high_water",
         "1 <= low_water < high_water", fmt::format("{} and {}", opt.low_water, opt.high_water));
  expect(opt.fill_boost >= 1, "flow.fill_boost", ">= 1", std::to_string(opt.fill_boost));
  expect(opt.latency_s >= 0 && opt.latency_s <= 3600, "flow.latency_s", "0 to 3600 s", std::to_string(opt.latency_s));
  expect(opt.max_downscale >= 1 && opt.max_downscale <= 64, "flow.max_downscale", "1 to 64",
         std::to_string(opt.max_downscale));
  if (opt_.lag_limit <= 0) opt_.lag_limit = opt_.high_water;
  if (live_) cursor_ = UINT64_MAX;  // resolved to the newest step by the first next()
}

void flow_controller::report(double now, int buffer, std::uint64_t, double fps, std::int64_t received) {
  report_time_ = now;
  report_buffer_ = std::max(0, buffer);
  sent_since_report_ = 0;
  report_received_ = received;
  started_ = true;
  if (fps > 0 && fps <= 1000) fps_ = fps;
}

void flow_controller::seek(std::uint64_t seq, bool live) {
  live_ = live;
  cursor_ = live ? UINT64_MAX : seq;
  group_step_ = skipping_step_ = INT64_MIN;
  c_.decimation = 1;
  c_.scale = 1;
}

int flow_controller::target_frames() const {
  const int t = static_cast<int>(std::ceil(opt_.latency_s * fps_ - 1e-9));
  return std::clamp(t, opt_.low_water, opt_.high_water - 1);
}

double flow_controller::estimated_buffer(double now) const {
  // Before the first report the viewer has not started playing: everything sent is buffered.
  const double drained = started_ && !paused_ ? std::max(0.0, now - report_time_) * fps_ : 0;
  // In flight: everything sent that the viewer had not received when it reported (frames queued
  // in the socket and on the link are on their way to the buffer, not a reason to send more).
  double in_flight = static_cast<double>(sent_since_report_);
  if (report_received_ >= 0 && c_.sent > static_cast<std::uint64_t>(report_received_))
    in_flight = std::max(in_flight, static_cast<double>(c_.sent - static_cast<std::uint64_t>(report_received_)));
  return std::max(0.0, report_buffer_ + in_flight - drained);
}

void flow_controller::adapt(double now, const frame_index& frames) {
  const std::uint64_t end = frames.end();
  const std::uint64_t lag = end > cursor_ ? end - cursor_ : 0;
  switch (opt_.policy) {
    case adapt_policy::skip_to_latest:
      if (lag > static_cast<std::uint64_t>(opt_.lag_limit)) {
        const std::uint64_t target = std::max(cursor_, frames.first_at_step(frames.step_of(end - 1), cursor_));
        c_.skipped += target - cursor_;
        cursor_ = target;
        group_step_ = INT64_MIN;
      }
      break;
    case adapt_policy::decimate:
      // Double while behind, halve once caught up; at most one change a second (the viewer's
      // reports need that long to show the effect).
      if (now - last_adapt_ >= 1.0) {
        if (lag > static_cast<std::uint64_t>(opt_.lag_limit) && c_.decimation < opt_.max_decimation) {
          c_.decimation *= 2;
          last_adapt_ = now;
        } else if (lag <= static_cast<std::uint64_t>(opt_.low_water) && c_.decimation > 1) {
          c_.decimation /= 2;
          last_adapt_ = now;
        }
      }
      // Still far behind at the largest factor: drop the backlog rather than lag without bound.
      if (lag > static_cast<std::uint64_t>(4 * opt_.lag_limit * opt_.max_decimation)) {
        const std::uint64_t target = std::max(cursor_, frames.first_at_step(frames.step_of(end - 1), cursor_));
        c_.skipped += target - cursor_;
        cursor_ = target;
      }
      break;
    case adapt_policy::reduce_resolution: {
      // Smaller frames help only when the link is what holds the viewer back: its buffer is below
      // the target while frames wait here. A full buffer with a backlog means the viewer fell
      // behind live (a past slow spell, a pause): skip to the newest step instead, as smaller
      // frames would not drain it at playout rate = producer rate.
      const bool starved = started_ && report_buffer_ < target_frames();
      if (lag > static_cast<std::uint64_t>(opt_.lag_limit) && starved && c_.scale < opt_.max_downscale &&
          now - last_adapt_ >= 1.0) {
        c_.scale = std::min(opt_.max_downscale, c_.scale * 2);
        last_adapt_ = now;
      } else if (!starved && c_.scale > 1 && now - last_adapt_ >= 3.0) {
        c_.scale /= 2;  // slower down than up: each step up costs the viewer a few frames' lag
        last_adapt_ = now;
      }
      if ((lag > static_cast<std::uint64_t>(opt_.lag_limit) && !starved) ||
          lag > static_cast<std::uint64_t>(4 * opt_.lag_limit)) {
        const std::uint64_t target = std::max(cursor_, frames.first_at_step(frames.step_of(end - 1), cursor_));
        c_.skipped += target - cursor_;
        cursor_ = target;
      }
      break;
    }
    case adapt_policy::catch_up:
      break;
  }
}

void flow_controller::skip_decimated(const frame_index& frames) {
  const std::uint64_t end = frames.end();
  while (cursor_ < end) {
    const std::int64_t s = frames.step_of(cursor_);
    if (s == skipping_step_) {
      ++cursor_, ++c_.skipped;
      continue;
    }
    if (s != group_step_) {
      ++groups_;
      if (c_.decimation > 1 && groups_ % static_cast<std::uint64_t>(c_.decimation) != 0) {
        skipping_step_ = s;
        continue;
      }
      group_step_ = s;
    }
    break;
  }
}

flow_decision flow_controller::next(double now, const frame_index& frames, std::size_t buffered_bytes) {
  const std::uint64_t first = frames.first(), end = frames.end();
  if (end == first) return {flow_decision::idle};
  if (cursor_ == UINT64_MAX) {
    // Join live target_frames() behind the newest frame, at the start of its step: the start-up
    // buffer comes from frames that exist, at the fill rate, and the viewer then plays that far
    // behind live with that much to absorb a hiccup.
    const std::uint64_t behind = std::min<std::uint64_t>(static_cast<std::uint64_t>(target_frames()), end - 1 - first);
    cursor_ = frames.first_at_step(frames.step_of(end - 1 - behind), first);
  }
  if (cursor_ < first) {  // gone from the cache and not recorded
    c_.skipped += first - cursor_;
    cursor_ = first;
  }
  if (live_) {
    adapt(now, frames);
    if (c_.decimation > 1) skip_decimated(frames);
  }
  if (cursor_ >= end) return {flow_decision::idle};
  const double period = 1.0 / fps_;
  if (buffered_bytes > opt_.max_buffered_bytes) {
    ++c_.congested;
    return {flow_decision::wait, 0, now + period / 4};
  }
  const double level = estimated_buffer(now);
  if (level >= opt_.high_water) {
    ++c_.held;
    // The level falls by one frame per period; ask again when it is just below the mark.
    return {flow_decision::wait, 0, now + std::max(period / 4, (level - opt_.high_water + 0.5) * period)};
  }
  const double interval = level < (live_ ? target_frames() : opt_.low_water) ? period / opt_.fill_boost : period;
  if (now < last_send_ + interval) return {flow_decision::wait, 0, last_send_ + interval};
  return {flow_decision::send, cursor_, now, live_ ? c_.scale : 1};
}

void flow_controller::sent(double now, std::uint64_t seq) {
  last_send_ = now;
  cursor_ = seq + 1;
  ++sent_since_report_;
  ++c_.sent;
}

}  // namespace toru::stream
