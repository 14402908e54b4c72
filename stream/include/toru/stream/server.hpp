// SPDX-License-Identifier: BSD-3-Clause
// The sending side of stream/: serves the frames of a frame_log to any number of viewers, each
// with its own flow controller and its own bounded send queue, so one slow viewer never slows
// the others or the producer. Two transports on one I/O thread:
//   - HTTP + WebSocket (websocketpp on standalone asio): GET / is the viewer page, GET /status
//     the state as JSON, and a WebSocket upgrade on any path is a viewer;
//   - plain TCP: messages framed as u8 kind ('F' frame, 'J' JSON) | u32 LE length | bytes.
//
// The protocol (JSON control messages; frames are the messages of frame.hpp):
//   viewer -> server  {"type":"hello","from":"live"|seq,"fps":f,"policy":"skip"|"decimate"|"catch-up"}
//                     {"type":"report","buffer":frames,"position":seq,"fps":f}   (a few per second)
//                     {"type":"seek","seq":n}  {"type":"live"}  {"type":"pause"}  {"type":"play"}
//   server -> viewer  frames, and {"type":"status","first","end","cursor","live","sent","skipped",
//                     "decimation","buffer_estimate","policy","fps"} twice a second.
// Bad input (malformed or oversized messages, no hello within hello_timeout_s, a viewer that reads
// nothing for stall_timeout_s) logs one line naming the viewer and drops that connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "toru/stream/flow_control.hpp"
#include "toru/stream/frame_log.hpp"

namespace toru::stream {

struct server_options {
  std::string address = "0.0.0.0";
  int http_port = 0;  // HTTP + WebSocket; 0: any free port, -1: off
  int tcp_port = -1;  // plain TCP; 0: any free port, -1: off
  flow_options flow{};
  bool paced = true;  // false: the baseline, every frame sent as soon as it exists, no flow control
  // TCP viewers' congestion control (Linux TCP_CONGESTION; empty: the system's). cubic because BBR,
  // the default on many systems, underestimates a new application-limited flow's share of a link
  // an established flow fills, for seconds (docs/history/benchmarks-2026-12.md#stream); cubic is
  // built into every Linux.
  std::string tcp_congestion = "cubic";
  double hello_timeout_s = 10;
  double stall_timeout_s = 10;
  std::size_t max_client_message = 4096;
  std::size_t max_viewers = 64;
  std::string title = "toru stream";
};

struct server_counters {
  std::uint64_t connections = 0, viewers = 0, dropped = 0, bad_messages = 0, frames_sent = 0, frames_skipped = 0;
};

class server {
 public:
  /// Starts listening and the I/O thread. Throws toru::error(io) if a port cannot be bound.
  server(frame_log& frames, server_options opt);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  int http_port() const;
  int tcp_port() const;
  /// New frames are in the log (thread-safe; cheap).
  void notify();
  server_counters counters() const;
  /// The state of the server and every viewer, as JSON (GET /status returns the same).
  std::string status_json() const;

 private:
  struct impl;
  std::unique_ptr<impl> p_;
};

namespace detail {
/// Throws toru::error(errc::io, message) (for the C++17 translation unit of the server).
[[noreturn]] void throw_io_error(const std::string& message);
}  // namespace detail

/// The embedded viewer page (HTML, CSS and JavaScript; no network resources).
std::string_view viewer_page();

}  // namespace toru::stream
