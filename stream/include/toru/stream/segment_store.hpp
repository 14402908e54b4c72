// SPDX-License-Identifier: BSD-3-Clause
// The recording: an append-only store of messages in segment files with an index, so viewers can
// join late, seek and replay, and a crash loses nothing acknowledged.
//
//   DIR/segment-<first seq, 12 digits>.trs   records: u32 'TRS1' | u32 length | u64 seq | i64 step |
//                                            f64 time | u32 crc32 (of seq..time and the payload) | u32 0 | payload
//   DIR/segment-<first seq, 12 digits>.idx   one 32-byte entry per record: seq, offset, step, time
//
// The data files are the truth; an index is rebuilt from its segment when it disagrees. Opening
// for writing recovers: the last segment is scanned, a torn tail (short or bad-CRC record, left by
// a kill during a write) is truncated, and appending continues with the next sequence number.
//
// Durability: append() returns once the record is written (a killed process loses nothing
// written: the page cache survives it). acknowledged() is the count of records that are durable
// under the sync policy: every_frame calls fdatasync before acknowledging; interval syncs at most
// every sync_interval_ms; none acknowledges on write (survives a process kill, not a power loss).
//
// Errors (full disk, file-size limit): append() refuses the record, truncates what it wrote,
// logs one clear line and returns false; the store stays usable for later, smaller records.
//
// Thread safety: one writer; any number of threads may read (get, index) while it appends.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace toru::stream {

enum class sync_policy { none, every_frame, interval };

struct store_options {
  std::string dir = {};
  sync_policy sync = sync_policy::every_frame;
  int sync_interval_ms = 100;
  std::uint64_t segment_bytes = 64ull << 20;  // a new segment starts after this many bytes
  std::uint64_t max_record_bytes = 256ull << 20;
  bool read_only = false;  // a viewer of someone else's recording: never writes, refresh() tails it
};

struct record_info {
  std::uint64_t seq = 0;
  std::int64_t step = 0;
  double time = 0;
  std::uint32_t bytes = 0;
};

class segment_store {
 public:
  /// Opens (creating DIR unless read_only) and recovers. Throws toru::error(io) naming DIR.
  explicit segment_store(store_options opt);
  ~segment_store();
  segment_store(const segment_store&) = delete;
  segment_store& operator=(const segment_store&) = delete;

  /// Appends a message; returns its seq, or nullopt if it was refused (I/O error: logged).
  std::optional<std::uint64_t> append(std::string_view message, std::int64_t step, double time);
  /// Records [0, acknowledged()) are durable under the sync policy.
  std::uint64_t acknowledged() const;
  /// Forces a sync now (interval policy: also done by append when due).
  void sync();

  /// Number of records (the next seq).
  std::uint64_t size() const;
  std::optional<record_info> info(std::uint64_t seq) const;
  /// The record's bytes; nullopt if seq is out of range or the read fails.
  std::optional<std::string> get(std::uint64_t seq) const;
  /// First seq >= from whose step is >= step (size() if none). Steps are expected not to decrease.
  std::uint64_t first_at_step(std::int64_t step, std::uint64_t from = 0) const;

  /// Read-only stores: picks up records appended by the writer since the last call.
  void refresh();

  const std::string& dir() const { return opt_.dir; }
  /// Bytes truncated from a torn tail when the store was opened.
  std::uint64_t recovered_bytes() const { return recovered_; }
  std::uint64_t failed_appends() const { return failed_; }

 private:
  struct segment;
  void open_existing();
  void scan(segment& s, bool truncate_tail);
  void start_segment(std::uint64_t first_seq);
  void write_index_entry(segment& s, const record_info& r, std::uint64_t offset);

  store_options opt_;
  mutable std::mutex m_;
  std::vector<std::unique_ptr<segment>> segs_;
  std::vector<record_info> index_;
  std::vector<std::uint64_t> offsets_;  // per seq: offset in its segment
  std::vector<std::uint32_t> seg_of_;   // per seq: segment number
  std::uint64_t acked_ = 0, recovered_ = 0, failed_ = 0, synced_upto_ = 0;
  double last_sync_ = 0;
  bool failing_ = false;
};

}  // namespace toru::stream
