// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/publisher.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"

namespace toru::stream {

publisher::publisher(publisher_options opt) : opt_(std::move(opt)) { start(); }

publisher::publisher(MPI_Comm comm, publisher_options opt) : opt_(std::move(opt)) {
  nranks_ = mpi_size(comm);
  rank_ = mpi_rank(comm);
  root_ = opt_.root;
  // Every rank checks the options the same way, so a bad root fails everywhere, not only on one rank.
  validate_collectively(comm, "toru::stream::publisher", {{"options.root", opt_.root}}, [&] {
    expect(opt_.root >= 0 && opt_.root < nranks_, "options.root", fmt::format("0 <= root < {}", nranks_),
           std::to_string(opt_.root));
    expect(opt_.max_frame_bytes > 0 && opt_.max_frame_bytes < (1ull << 31), "options.max_frame_bytes",
           "1 byte to 2 GiB", std::to_string(opt_.max_frame_bytes));
  });
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  // The root's start-up (a port, a directory) can fail: agree on it so no rank waits in a later gather.
  validate_collectively(comm_, [&] {
    if (rank_ == root_) start();
  });
}

void publisher::start() {
  expect(opt_.max_frame_bytes > 0 && opt_.max_frame_bytes < (1ull << 31), "options.max_frame_bytes", "1 byte to 2 GiB",
         std::to_string(opt_.max_frame_bytes));
  expect(opt_.encoding != codec::png, "options.encoding", "raw, zstd or lz4 (png is for 2-D frames: image_encoding)",
         "png");
  const full_policy when_full =
      opt_.when_full.value_or(opt_.record_dir.empty() ? full_policy::latest_wins : full_policy::block);
  queue_ = std::make_unique<frame_queue>(opt_.queue_slots, opt_.max_frame_bytes, when_full, opt_.block_timeout_s);
  if (!opt_.record_dir.empty())
    store_ = std::make_unique<segment_store>(store_options{.dir = opt_.record_dir,
                                                           .sync = opt_.sync,
                                                           .sync_interval_ms = opt_.sync_interval_ms,
                                                           .max_record_bytes = 2 * opt_.max_frame_bytes + (1 << 20)});
  log_ = std::make_unique<frame_log>(opt_.cache_frames, store_.get());
  next_seq_ = store_ ? store_->size() : 0;
  if (opt_.serve && (opt_.server.http_port >= 0 || opt_.server.tcp_port >= 0))
    server_ = std::make_unique<server>(*log_, opt_.server);
  thread_ = std::thread([this] { encode_loop(); });
}

publisher::~publisher() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) {
    try {
      complete_gathers();
    } catch (const std::exception& e) {
      log::write(log::level::warn, fmt::format("toru::stream: a gathered frame was not published: {}", e.what()));
    }
  }
  if (queue_) {
    flush(10);
    stop_ = true;
    queue_->close();
    if (thread_.joinable()) thread_.join();
    if (store_) store_->sync();
  }
  server_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

push_result publisher::publish(const frame_view& f) {
  if (!queue_) return push_result::dropped;
  validate(f);
  const auto r = queue_->push(f);
  if (r == push_result::dropped && !warned_block_ && queue_->counters().block_timeouts > 0) {
    warned_block_ = true;
    log::write(log::level::warn,
               fmt::format("toru::stream: frame '{}' step {} dropped: the encoder/recorder freed no queue slot within "
                           "block_timeout_s = {} s; frames are dropped without waiting until it does (logged once; "
                           "see counters().block_timeouts)",
                           f.name, f.step, opt_.block_timeout_s));
  }
  if (r == push_result::refused_oversize && !warned_refused_) {
    warned_refused_ = true;
    log::write(log::level::warn,
               fmt::format("toru::stream: frame '{}' of {} bytes refused: larger than max_frame_bytes = {} "
                           "(logged once; see counters().refused)",
                           f.name, f.data.size(), opt_.max_frame_bytes));
  }
  return r;
}

void publisher::encode_loop() {
  bool warned_encode = false;
  int nice = opt_.encoder_nice;
  if (const char* e = std::getenv("TORU_STREAM_ENCODER_NICE")) nice = std::atoi(e);  // experiments
  if (nice > 0) {
    // setpriority on a thread id changes that thread only (Linux); failure is harmless.
    const auto tid = static_cast<id_t>(::gettid());
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0) ::setpriority(PRIO_PROCESS, tid, std::min(19, now + nice));
  }
  while (true) {
    auto it = queue_->take(50);
    if (!it) {
      if (stop_) return;
      if (store_ && opt_.sync == sync_policy::interval && store_->acknowledged() < store_->size()) store_->sync();
      continue;
    }
    // Counted however the frame ends, so flush() knows when every taken frame is through.
    struct finish {
      std::atomic<std::uint64_t>& n;
      ~finish() { ++n; }
    } finished{finished_};
    const frame_view& f = it->view;
    const codec c = f.shape.size() == 2 ? opt_.image_encoding : opt_.encoding;
    const std::uint64_t seq = store_ ? store_->size() : next_seq_;
    std::string msg;
    try {
      msg = encode_message(f, c, seq, opt_.zstd_level);
    } catch (const std::exception& e) {
      ++encode_failures_;
      if (!warned_encode)
        log::write(log::level::warn,
                   fmt::format("toru::stream: frame '{}' not encoded: {} (logged once)", f.name, e.what()));
      warned_encode = true;
      queue_->done(*it);
      continue;
    }
    const std::int64_t step = f.step;
    const double time = f.time;
    queue_->done(*it);  // the slot is free for the simulation again before any I/O
    if (store_) {
      if (!store_->append(msg, step, time)) {
        ++record_failures_;
        continue;
      }
      ++recorded_;
    }
    log_->add(seq, step, std::make_shared<const std::string>(std::move(msg)));
    next_seq_ = seq + 1;
    ++encoded_;
    if (server_) server_->notify();
  }
}

bool publisher::flush(double timeout_s) {
  if (!queue_) return true;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  // Every frame queued is either taken by the encoder or still waiting (replaced ones are neither).
  while (queue_->size() > 0 || queue_->counters().taken > finished_) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (store_) store_->sync();
  return true;
}

publisher_counters publisher::counters() const {
  publisher_counters c;
  if (!queue_) return c;
  const auto q = queue_->counters();
  c.offered = q.offered + refused_gathered_.load(), c.queued = q.queued, c.dropped = q.dropped;
  c.refused = q.refused + refused_gathered_;
  c.encoded = encoded_, c.encode_failures = encode_failures_;
  c.recorded = recorded_, c.record_failures = record_failures_;
  c.blocked = q.blocked, c.block_timeouts = q.block_timeouts, c.blocked_s = q.blocked_s;
  c.acknowledged = store_ ? store_->acknowledged() : 0;
  return c;
}

int publisher::http_port() const { return server_ ? server_->http_port() : -1; }
int publisher::tcp_port() const { return server_ ? server_->tcp_port() : -1; }

}  // namespace toru::stream
