// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/segment_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/log.hpp"

namespace toru::stream {

namespace fs = std::filesystem;

namespace {
constexpr std::uint32_t record_magic = 0x31535254;  // "TRS1" little endian
constexpr std::size_t header_bytes = 40;
constexpr std::size_t index_entry_bytes = 32;

struct record_header {
  std::uint32_t magic, length;
  std::uint64_t seq;
  std::int64_t step;
  double time;
  std::uint32_t crc, zero;
};
static_assert(sizeof(record_header) == header_bytes);

struct index_entry {
  std::uint64_t seq, offset;
  std::int64_t step;
  double time;
};
static_assert(sizeof(index_entry) == index_entry_bytes);

std::uint32_t record_crc(const record_header& h, std::string_view payload) {
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, reinterpret_cast<const Bytef*>(&h.seq), 24);
  // zlib's length is a uInt: feed large payloads in pieces.
  for (std::size_t off = 0; off < payload.size(); off += 1u << 30) {
    const auto n = std::min<std::size_t>(payload.size() - off, 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(payload.data() + off), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(c);
}

bool pread_all(int fd, void* buf, std::size_t n, std::uint64_t off) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<std::size_t>(r), off += static_cast<std::uint64_t>(r);
  }
  return true;
}

// Errors are logged whatever TORU_LOG says: a recording that stops must never go unnoticed.
template <class... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  log::write(log::level::error, fmt::format(f, std::forward<Args>(args)...));
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

struct segment_store::segment {
  std::uint64_t first_seq = 0;
  std::string data_path, idx_path;
  int fd = -1, idx_fd = -1;
  std::uint64_t bytes = 0;  // end of the last good record
  ~segment() {
    if (fd >= 0) ::close(fd);
    if (idx_fd >= 0) ::close(idx_fd);
  }
};

segment_store::segment_store(store_options opt) : opt_(std::move(opt)) {
  expect(!opt_.dir.empty(), "store.dir", "a directory path", "an empty string");
  expect(opt_.sync_interval_ms >= 0, "store.sync_interval_ms", ">= 0", std::to_string(opt_.sync_interval_ms));
  std::error_code ec;
  if (!opt_.read_only) fs::create_directories(opt_.dir, ec);
  if (!fs::is_directory(opt_.dir))
    throw error(errc::io, fmt::format("store.dir: cannot {} directory '{}'{}", opt_.read_only ? "open" : "create",
                                      opt_.dir, ec ? ": " + ec.message() : ""));
  open_existing();
  last_sync_ = now_ms();
}

segment_store::~segment_store() {
  if (!opt_.read_only && acked_ < index_.size()) sync();
}

void segment_store::open_existing() {
  std::vector<std::pair<std::uint64_t, std::string>> found;
  for (const auto& e : fs::directory_iterator(opt_.dir)) {
    const auto name = e.path().filename().string();
    std::uint64_t first = 0;
    if (name.size() == 24 && name.starts_with("segment-") && name.ends_with(".trs") &&
        std::sscanf(name.c_str() + 8, "%12lu", &first) == 1)
      found.emplace_back(first, e.path().string());
  }
  std::sort(found.begin(), found.end());
  for (std::size_t i = 0; i < found.size(); ++i) {
    auto s = std::make_unique<segment>();
    s->first_seq = found[i].first;
    s->data_path = found[i].second;
    s->idx_path = s->data_path.substr(0, s->data_path.size() - 4) + ".idx";
    s->fd = ::open(s->data_path.c_str(), opt_.read_only ? O_RDONLY : O_RDWR | O_CLOEXEC);
    if (s->fd < 0)
      throw error(errc::io, fmt::format("store: cannot open '{}': {}", s->data_path, std::strerror(errno)));
    if (s->first_seq != index_.size())
      throw error(errc::io, fmt::format("store: '{}' starts at seq {}, expected {} (a segment is missing)",
                                        s->data_path, s->first_seq, index_.size()));
    const bool last = i + 1 == found.size();
    // A sealed segment's index is trusted when it covers the data file exactly; anything else is rescanned.
    bool from_index = false;
    if (!last) {
      struct stat st {};
      const int ifd = ::open(s->idx_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (ifd >= 0 && ::fstat(ifd, &st) == 0 && st.st_size % index_entry_bytes == 0 && st.st_size > 0) {
        std::vector<index_entry> entries(static_cast<std::size_t>(st.st_size) / index_entry_bytes);
        struct stat ds {};
        if (pread_all(ifd, entries.data(), static_cast<std::size_t>(st.st_size), 0) && ::fstat(s->fd, &ds) == 0) {
          record_header last_h{};
          const auto& le = entries.back();
          bool ok = pread_all(s->fd, &last_h, header_bytes, le.offset) &&
                    le.offset + header_bytes + last_h.length == static_cast<std::uint64_t>(ds.st_size);
          for (std::size_t k = 0; ok && k < entries.size(); ++k) ok = entries[k].seq == s->first_seq + k;
          if (ok) {
            for (std::size_t k = 0; k < entries.size(); ++k) {
              const std::uint64_t end =
                  k + 1 < entries.size() ? entries[k + 1].offset : le.offset + header_bytes + last_h.length;
              index_.push_back({entries[k].seq, entries[k].step, entries[k].time,
                                static_cast<std::uint32_t>(end - entries[k].offset - header_bytes)});
              offsets_.push_back(entries[k].offset);
              seg_of_.push_back(static_cast<std::uint32_t>(segs_.size()));
            }
            s->bytes = static_cast<std::uint64_t>(ds.st_size);
            from_index = true;
          }
        }
      }
      if (ifd >= 0) ::close(ifd);
    }
    segs_.push_back(std::move(s));
    if (!from_index) scan(*segs_.back(), last && !opt_.read_only);
  }
  if (!opt_.read_only) {
    if (segs_.empty()) start_segment(0);
    // The last segment's index is rewritten from its data: it may lack entries written before a kill.
    auto& s = *segs_.back();
    s.idx_fd = ::open(s.idx_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s.idx_fd < 0)
      throw error(errc::io, fmt::format("store: cannot write '{}': {}", s.idx_path, std::strerror(errno)));
    for (std::uint64_t q = s.first_seq; q < index_.size(); ++q) write_index_entry(s, index_[q], offsets_[q]);
    ::lseek(s.fd, static_cast<off_t>(s.bytes), SEEK_SET);
  }
  acked_ = synced_upto_ = index_.size();
}

void segment_store::scan(segment& s, bool truncate_tail) {
  struct stat st {};
  if (::fstat(s.fd, &st) != 0) throw error(errc::io, fmt::format("store: cannot stat '{}'", s.data_path));
  const auto file_bytes = static_cast<std::uint64_t>(st.st_size);
  std::string payload;
  while (s.bytes + header_bytes <= file_bytes) {
    record_header h{};
    if (!pread_all(s.fd, &h, header_bytes, s.bytes)) break;
    if (h.magic != record_magic || h.seq != index_.size() || h.length > opt_.max_record_bytes ||
        s.bytes + header_bytes + h.length > file_bytes)
      break;
    payload.resize(h.length);
    if (!pread_all(s.fd, payload.data(), h.length, s.bytes + header_bytes)) break;
    if (record_crc(h, payload) != h.crc) break;
    index_.push_back({h.seq, h.step, h.time, h.length});
    offsets_.push_back(s.bytes);
    seg_of_.push_back(static_cast<std::uint32_t>(segs_.size() - 1));  // scan() runs on the last segment
    s.bytes += header_bytes + h.length;
  }
  if (truncate_tail && s.bytes < file_bytes) {
    recovered_ += file_bytes - s.bytes;
    log::warn("toru::stream: recording '{}': truncated a torn tail of {} bytes after {} records (recovery)",
              s.data_path, file_bytes - s.bytes, index_.size());
    if (::ftruncate(s.fd, static_cast<off_t>(s.bytes)) != 0 || ::fdatasync(s.fd) != 0)
      throw error(errc::io, fmt::format("store: cannot truncate '{}': {}", s.data_path, std::strerror(errno)));
  }
}

void segment_store::start_segment(std::uint64_t first_seq) {
  auto s = std::make_unique<segment>();
  s->first_seq = first_seq;
  s->data_path = fmt::format("{}/segment-{:012}.trs", opt_.dir, first_seq);
  s->idx_path = fmt::format("{}/segment-{:012}.idx", opt_.dir, first_seq);
  s->fd = ::open(s->data_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (s->fd < 0)
    throw error(errc::io, fmt::format("store: cannot create '{}': {}", s->data_path, std::strerror(errno)));
  if (!segs_.empty()) {
    auto& prev = *segs_.back();
    ::fdatasync(prev.fd);
    if (prev.idx_fd >= 0) ::fdatasync(prev.idx_fd), ::close(prev.idx_fd), prev.idx_fd = -1;
    s->idx_fd = ::open(s->idx_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  // The new file's directory entry must be durable too, or a crash can lose the whole segment.
  const int dfd = ::open(opt_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) ::fsync(dfd), ::close(dfd);
  segs_.push_back(std::move(s));
}

void segment_store::write_index_entry(segment& s, const record_info& r, std::uint64_t offset) {
  const index_entry e{r.seq, offset, r.step, r.time};
  const auto at = static_cast<off_t>((r.seq - s.first_seq) * index_entry_bytes);
  if (s.idx_fd >= 0 && ::pwrite(s.idx_fd, &e, sizeof e, at) != static_cast<ssize_t>(sizeof e))
    log::warn("toru::stream: recording: cannot write index '{}' ({}); it is rebuilt from the data on open", s.idx_path,
              std::strerror(errno));
}

std::optional<std::uint64_t> segment_store::append(std::string_view message, std::int64_t step, double time) {
  expect(!opt_.read_only, "segment_store::append", "a store opened for writing", "a read-only store");
  if (message.size() > opt_.max_record_bytes) {
    std::lock_guard lock(m_);
    ++failed_;
    log::warn("toru::stream: recording '{}': frame of {} bytes refused (store.max_record_bytes = {})", opt_.dir,
              message.size(), opt_.max_record_bytes);
    return std::nullopt;
  }
  std::unique_lock lock(m_);
  const std::uint64_t seq = index_.size();
  if (segs_.back()->bytes > 0 && segs_.back()->bytes + header_bytes + message.size() > opt_.segment_bytes)
    start_segment(seq);
  segment& s = *segs_.back();
  lock.unlock();  // readers only look at records < seq, so the write itself runs unlocked

  record_header h{record_magic, static_cast<std::uint32_t>(message.size()), seq, step, time, 0, 0};
  h.crc = record_crc(h, message);
  iovec iov[2] = {{&h, header_bytes}, {const_cast<char*>(message.data()), message.size()}};
  std::size_t done = 0;
  const std::size_t total = header_bytes + message.size();
  int err = 0;
  while (done < total) {
    // pwritev from the running offset, skipping what an earlier partial write already wrote.
    iovec cur[2];
    int n = 0;
    std::size_t skip = done;
    for (auto& v : iov) {
      if (skip >= v.iov_len) {
        skip -= v.iov_len;
        continue;
      }
      cur[n++] = {static_cast<char*>(v.iov_base) + skip, v.iov_len - skip};
      skip = 0;
    }
    const ssize_t w = ::pwritev(s.fd, cur, n, static_cast<off_t>(s.bytes + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<std::size_t>(w);
  }
  if (err == 0 && opt_.sync == sync_policy::every_frame && ::fdatasync(s.fd) != 0) err = errno;
  lock.lock();
  if (err != 0) {
    // Leave no partial record behind: the store stays consistent and later frames may still fit.
    if (::ftruncate(s.fd, static_cast<off_t>(s.bytes)) != 0)
      log_error("toru::stream: recording '{}': cannot truncate a failed write: {}", s.data_path, std::strerror(errno));
    ++failed_;
    if (!failing_)
      log_error(
          "toru::stream: recording '{}': cannot append frame {} ({} bytes): {}; the frame is refused and the "
          "simulation continues",
          s.data_path, seq, message.size(), std::strerror(err));
    failing_ = true;
    return std::nullopt;
  }
  if (failing_) log::warn("toru::stream: recording '{}': appending works again at frame {}", opt_.dir, seq);
  failing_ = false;
  const record_info r{seq, step, time, static_cast<std::uint32_t>(message.size())};
  write_index_entry(s, r, s.bytes);
  index_.push_back(r);
  offsets_.push_back(s.bytes);
  seg_of_.push_back(static_cast<std::uint32_t>(segs_.size() - 1));
  s.bytes += total;
  if (opt_.sync == sync_policy::every_frame || opt_.sync == sync_policy::none) {
    acked_ = index_.size();
  } else if (now_ms() - last_sync_ >= opt_.sync_interval_ms) {
    lock.unlock();
    sync();
  }
  return seq;
}

void segment_store::sync() {
  if (opt_.read_only) return;
  std::unique_lock lock(m_);
  const std::uint64_t upto = index_.size();
  const int fd = segs_.back()->fd;
  lock.unlock();
  if (::fdatasync(fd) != 0) {
    log_error("toru::stream: recording '{}': fdatasync failed: {}", opt_.dir, std::strerror(errno));
    return;
  }
  lock.lock();
  acked_ = std::max(acked_, upto);
  last_sync_ = now_ms();
}

std::uint64_t segment_store::acknowledged() const {
  std::lock_guard lock(m_);
  return acked_;
}

std::uint64_t segment_store::size() const {
  std::lock_guard lock(m_);
  return index_.size();
}

std::optional<record_info> segment_store::info(std::uint64_t seq) const {
  std::lock_guard lock(m_);
  if (seq >= index_.size()) return std::nullopt;
  return index_[seq];
}

std::optional<std::string> segment_store::get(std::uint64_t seq) const {
  std::unique_lock lock(m_);
  if (seq >= index_.size()) return std::nullopt;
  const int fd = segs_[seg_of_[seq]]->fd;
  const std::uint64_t off = offsets_[seq] + header_bytes;
  std::string out(index_[seq].bytes, '\0');
  lock.unlock();
  if (!pread_all(fd, out.data(), out.size(), off)) return std::nullopt;
  return out;
}

std::uint64_t segment_store::first_at_step(std::int64_t step, std::uint64_t from) const {
  std::lock_guard lock(m_);
  if (from >= index_.size()) return index_.size();
  auto it = std::lower_bound(index_.begin() + static_cast<std::ptrdiff_t>(from), index_.end(), step,
                             [](const record_info& r, std::int64_t s) { return r.step < s; });
  return static_cast<std::uint64_t>(it - index_.begin());
}

void segment_store::refresh() {
  if (!opt_.read_only) return;
  std::lock_guard lock(m_);
  if (!segs_.empty()) scan(*segs_.back(), false);
  // New segments appear as the writer fills the last one; follow all of them.
  while (segs_.empty() || segs_.back()->first_seq != index_.size()) {
    const auto next = fmt::format("{}/segment-{:012}.trs", opt_.dir, index_.size());
    const int fd = ::open(next.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    auto s = std::make_unique<segment>();
    s->first_seq = index_.size();
    s->data_path = next;
    s->fd = fd;
    segs_.push_back(std::move(s));
    scan(*segs_.back(), false);
  }
  acked_ = index_.size();
}

}  // namespace toru::stream
