// SPDX-License-Identifier: BSD-3-Clause
// toru::stream::publisher: the producer side, inside a simulation. publish() copies a frame into
// a bounded, pre-allocated queue and returns; it never waits for a viewer or the network. A
// background thread encodes (raw, zstd, lz4; PNG through a colour map for 2-D frames), records to
// the segment store (optional) and adds the frame to the log the server reads, which paces it
// out to each viewer under that viewer's flow control: viewers read the log and skip, they never
// hold up the recorder. A recorded stream is lossless by default (when_full = block: publish()
// waits for a free slot when the encoder or the disk falls behind, counted in blocked_s); a live-
// only stream keeps the newest frames (latest_wins) and never waits.
//
//   toru::stream::publisher pub(MPI_COMM_WORLD, {.record_dir = "run/stream", .server = {.http_port = 8080}});
//   for (step ...) {
//     ...
//     pub.publish_gathered(toru::stream::make_frame<float>("u_x z=0", step, t, {my_rows, n}, my_rows_data));
//     if (rank == 0) pub.publish(toru::stream::make_frame<double>("spectrum", step, t, {nk}, ek));
//   }
//
// Frames from all ranks: publish_gathered() (collective, every rank in the same order)
// concatenates the ranks' tiles along axis 0 at the root, which owns the queue, the thread, the
// recording and the server. It never waits for the gather: each call copies the tile, starts a
// non-blocking exchange of the tiles' sizes (MPI_Iallgather) and completes the previous calls'
// (the sizes of call k-1 start its MPI_Igatherv; the data of call k-2 is published at the root),
// so a gathered frame enters the queue two calls later, or at complete_gathers(). Errors in a
// gathered call (ranks disagree on name, dtype or extents; a bad tile; too large a frame) are
// found at the next gathered call, the same on every rank. Tiled instead: give every rank its own
// publisher on MPI_COMM_SELF (its own port and directory) and set frame_view::origin/global_shape.
//
// Thread safety: publish() from one thread at a time; counters() from any thread. Only the
// calling thread makes MPI calls (MPI_THREAD_FUNNELED is enough).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "toru/stream/frame.hpp"
#include "toru/stream/frame_log.hpp"
#include "toru/stream/frame_queue.hpp"
#include "toru/stream/segment_store.hpp"
#include "toru/stream/server.hpp"

namespace toru::stream {

struct publisher_options {
  std::size_t queue_slots = 2;              // frames waiting for the encoder, at most
  std::size_t max_frame_bytes = 16u << 20;  // larger frames are refused (counted, logged once)
  // When every slot is full. Unset: block if recording (every frame produced is recorded; the
  // wait is on local encoding and disk throughput, never on a viewer), latest_wins if not.
  std::optional<full_policy> when_full = std::nullopt;
  // block: a wait longer than this (a hung disk) drops the frame, logged, and frames are dropped
  // without waiting until the encoder frees a slot (counters().block_timeouts).
  double block_timeout_s = 5;
  codec encoding = codec::raw;        // frames that are not 2-D (browsers decode raw and PNG; zstd/lz4 for scripts)
  codec image_encoding = codec::png;  // 2-D frames (raw, zstd or lz4 keep them exact)
  int zstd_level = 1;
  std::string record_dir = {};  // empty: no recording (live only)
  sync_policy sync = sync_policy::interval;
  int sync_interval_ms = 200;
  std::size_t cache_frames = 64;  // newest encoded frames kept in memory for viewers
  bool serve = true;              // run a server (root only)
  server_options server{.http_port = -1, .tcp_port = -1};
  int root = 0;
  // The encoder thread runs this much nicer than the simulation (Linux per-thread nice; 0: the
  // same): on a node whose cores all run solver ranks it takes the idle moments, not a rank's turn.
  int encoder_nice = 10;
};

struct publisher_counters {
  std::uint64_t offered = 0, queued = 0, dropped = 0, refused = 0;    // publish() on the root
  std::uint64_t encoded = 0, encode_failures = 0;                     // encoder thread
  std::uint64_t recorded = 0, acknowledged = 0, record_failures = 0;  // recording
  std::uint64_t blocked = 0, block_timeouts = 0;  // when_full = block: publishes that waited / gave up
  double blocked_s = 0;                           // the time publish() waited for a free slot, in all
};

class publisher {
 public:
  /// Collective over comm (duplicated inside). The root starts the thread, the store and the server.
  publisher(MPI_Comm comm, publisher_options opt);
  /// One process, no MPI.
  explicit publisher(publisher_options opt);
  /// Completes pending gathers (so every rank must destroy it, as MPI_Comm_free requires), encodes
  /// what is queued (up to 10 s), then stops.
  ~publisher();
  publisher(const publisher&) = delete;
  publisher& operator=(const publisher&) = delete;

  /// Root only (other ranks: a no-op returning dropped). Validates f (throws invalid_argument),
  /// copies it and returns (under when_full = block, once a slot is free).
  push_result publish(const frame_view& f);
  /// Collective, non-blocking: every rank's tile (same name, dtype and trailing extents; any
  /// number of rows, zero included) is copied and gathered along axis 0 at the root, where it is
  /// published at the second next gathered call (or complete_gathers). Returns queued (the tile is
  /// on its way; the frame's fate is in counters()), or refused_oversize if this rank's tile alone
  /// exceeds max_frame_bytes. Throws, on every rank, an error found in the previous call (that
  /// call's frame and this call's tile are then not published).
  push_result publish_gathered(const frame_view& tile);
  /// Collective: waits for every started gather and publishes it at the root (throws as above).
  void complete_gathers();

  /// Waits until every queued frame is encoded (and recorded), up to timeout_s; true if so.
  bool flush(double timeout_s = 10);
  publisher_counters counters() const;
  bool is_root() const { return rank_ == root_; }
  /// The server's ports on the root (-1 elsewhere or when off).
  int http_port() const;
  int tcp_port() const;
  server* get_server() { return server_.get(); }
  segment_store* store() { return store_.get(); }
  frame_log* frames() { return log_.get(); }

 private:
  void start();
  void encode_loop();
  // The gather pipeline (publisher_gather.cpp).
  void finish_data();
  void finish_sizes();

  struct staged_tile {  // a copy of a gathered call's tile, kept until its gather completes
    std::string name;
    std::int64_t step = 0;
    double time = 0;
    std::vector<std::int64_t> shape;
    dtype type = dtype::f64;
    std::vector<std::byte> data;
    std::size_t bytes = 0;
    std::string error;  // this rank's tile was invalid: the message
  };
  static constexpr int size_fields = 6;  // per rank: status, dtype, axes, name digest, extents digest, bytes
  staged_tile staged_[2];
  int next_stage_ = 0;
  int sizes_stage_ = -1, data_stage_ = -1;  // the stage whose sizes / data are in flight (-1: none)
  MPI_Request sizes_req_ = MPI_REQUEST_NULL, data_req_ = MPI_REQUEST_NULL;
  std::int64_t my_sizes_[size_fields] = {};
  std::vector<std::int64_t> all_sizes_;
  std::vector<int> counts_, displs_;
  std::int64_t data_total_ = 0;

  publisher_options opt_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, root_ = 0, nranks_ = 1;
  std::unique_ptr<frame_queue> queue_;
  std::unique_ptr<segment_store> store_;
  std::unique_ptr<frame_log> log_;
  std::unique_ptr<server> server_;
  std::vector<std::byte> gather_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> finished_{0};  // frames the encoder took and is done with
  std::atomic<std::uint64_t> encoded_{0}, encode_failures_{0}, recorded_{0}, record_failures_{0};
  std::uint64_t next_seq_ = 0;
  std::atomic<std::uint64_t> refused_gathered_{0};
  bool warned_refused_ = false, warned_block_ = false;
};

}  // namespace toru::stream
