// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/viewer_client.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"

namespace toru::stream {

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int connect_to(const std::string& host, int port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  const auto service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    throw error(errc::io, fmt::format("viewer: cannot resolve '{}': {}", host, gai_strerror(rc)));
  int fd = -1, err = 0;
  for (auto* a = res; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) err = errno, ::close(fd), fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) throw error(errc::io, fmt::format("viewer: cannot connect to {}:{}: {}", host, port, std::strerror(err)));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void send_json(int fd, const nlohmann::json& j) {
  const std::string body = j.dump();
  std::string m(5, '\0');
  m[0] = 'J';
  for (int i = 0; i < 4; ++i) m[1 + i] = static_cast<char>((body.size() >> (8 * i)) & 0xff);
  m += body;
  std::size_t off = 0;
  while (off < m.size()) {
    const ssize_t w = ::send(fd, m.data() + off, m.size() - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw error(errc::io, fmt::format("viewer: send failed: {}", std::strerror(errno)));
    off += static_cast<std::size_t>(w);
  }
}

struct fd_guard {
  int fd;
  ~fd_guard() { ::close(fd); }
};
struct file_guard {
  std::FILE* f;
  ~file_guard() {
    if (f) std::fclose(f);
  }
};
}  // namespace

viewer_stats run_viewer(const viewer_options& opt,
                        const std::function<bool(const std::string&, const frame_header&)>& on_play) {
  expect(opt.fps > 0, "viewer.fps", "> 0", std::to_string(opt.fps));
  const int fd = connect_to(opt.host, opt.port);
  fd_guard guard{fd};
  expect(opt.low_water >= 1 && opt.high_water > opt.low_water, "viewer.low_water/high_water",
         "1 <= low_water < high_water", fmt::format("{} and {}", opt.low_water, opt.high_water));
  std::FILE* log = nullptr;
  if (!opt.buffer_log.empty() && !(log = std::fopen(opt.buffer_log.c_str(), "w")))
    throw error(errc::io,
                fmt::format("viewer.buffer_log: cannot write '{}': {}", opt.buffer_log, std::strerror(errno)));
  file_guard log_guard{log};
  if (log) std::fputs("t_s,buffer,received,played,stalls\n", log);
  nlohmann::json hello{{"type", "hello"},
                       {"fps", opt.fps},
                       {"low_water", opt.low_water},
                       {"high_water", opt.high_water},
                       {"latency", opt.latency_s}};
  if (opt.from == "live") {
    hello["from"] = "live";
  } else {
    std::size_t used = 0;
    std::uint64_t from = 0;
    try {
      from = std::stoull(opt.from, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    expect(used == opt.from.size() && used > 0, "viewer.from", "\"live\" or a frame number", opt.from);
    hello["from"] = from;
  }
  if (!opt.policy.empty()) hello["policy"] = opt.policy;
  send_json(fd, hello);

  viewer_stats st;
  st.start_s = now_s();
  // The sender's target (flow_controller::target_frames): start (and restart after a stall) with
  // that much, so what absorbs a hiccup is the latency target, not the minimum. A replay: low_water,
  // the level the sender fills a replay to.
  st.start_frames = opt.from != "live" ? opt.low_water
                                       : std::clamp(static_cast<int>(std::ceil(opt.latency_s * opt.fps - 1e-9)),
                                                    opt.low_water, opt.high_water - 1);
  st.min_buffer = 1 << 30;
  std::deque<std::pair<std::string, frame_header>> buffer;
  std::string in;
  const double period = 1.0 / opt.fps;
  double next_tick = st.start_s + period, next_report = st.start_s + 0.25, last_arrival = st.start_s;
  double last_play = 0, jitter_sum = 0, interval_sum = 0;
  std::uint64_t intervals = 0, position = 0;
  bool started = false;
  auto play = [&](std::string& msg, const frame_header& h, double t) {
    if (st.played > 0 && (started || !opt.playout)) {
      const double d = t - last_play;
      const double j = std::abs(d - period) * 1e3;
      jitter_sum += j, interval_sum += d * 1e3, ++intervals;
      st.jitter_max_ms = std::max(st.jitter_max_ms, j);
    }
    if (st.played == 0) st.first_play_s = t - st.start_s;
    last_play = t;
    position = h.seq;
    ++st.played;
    return on_play(msg, h);
  };
  std::vector<char> chunk(1 << 16);
  while (true) {
    const double now = now_s();
    if (opt.seconds > 0 && now - st.start_s >= opt.seconds) {
      st.stop_reason = "time limit";
      break;
    }
    if (opt.max_frames > 0 && st.played >= opt.max_frames) {
      st.stop_reason = "frame limit";
      break;
    }
    if (now - last_arrival > opt.idle_timeout_s) {
      st.stop_reason = "idle";
      break;
    }
    if (now >= next_report) {
      send_json(fd, {{"type", "report"},
                     {"buffer", buffer.size()},
                     {"position", position},
                     {"fps", opt.fps},
                     {"received", st.received}});
      if (log)
        std::fprintf(log, "%.3f,%zu,%llu,%llu,%llu\n", now - st.start_s, buffer.size(),
                     static_cast<unsigned long long>(st.received), static_cast<unsigned long long>(st.played),
                     static_cast<unsigned long long>(st.stalls));
      next_report += 0.25;
      if (next_report < now) next_report = now + 0.25;
    }
    if (opt.playout && now >= next_tick) {
      // A fixed cadence from the start: lateness of one tick is not carried into the next.
      next_tick += period;
      if (next_tick < now) next_tick = now + period;
      // Or the stream has paused or ended (nothing for a second): play what there is.
      if (!started &&
          (static_cast<int>(buffer.size()) >= st.start_frames || (!buffer.empty() && now - last_arrival > 1.0)))
        started = true;
      if (started) {
        st.min_buffer = std::min(st.min_buffer, static_cast<int>(buffer.size()));
        if (buffer.empty()) {
          ++st.stalls;
          started = false;  // rebuffer, as a video player would
        } else {
          auto [msg, h] = std::move(buffer.front());
          buffer.pop_front();
          if (!play(msg, h, now)) {
            st.stop_reason = "callback";
            break;
          }
          continue;
        }
      }
    }
    const double wake = std::min(opt.playout ? next_tick : next_report, next_report);
    pollfd p{fd, POLLIN, 0};
    const int ms = std::max(0, static_cast<int>(std::ceil((wake - now_s()) * 1e3)));
    const int rc = ::poll(&p, 1, ms);
    if (rc < 0 && errno != EINTR) throw error(errc::io, fmt::format("viewer: poll: {}", std::strerror(errno)));
    if (rc <= 0) continue;
    const ssize_t r = ::recv(fd, chunk.data(), chunk.size(), 0);
    if (r <= 0) {
      st.stop_reason = r == 0 ? "server closed the connection" : std::strerror(errno);
      break;
    }
    in.append(chunk.data(), static_cast<std::size_t>(r));
    last_arrival = now_s();
    std::size_t off = 0;
    bool stop = false;
    while (in.size() - off >= 5) {
      std::uint32_t n = 0;
      for (int i = 0; i < 4; ++i)
        n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[off + 1 + i])) << (8 * i);
      if (n > opt.max_message_bytes)
        throw error(errc::io, fmt::format("viewer: message of {} bytes exceeds the limit", n));
      if (in.size() - off < 5 + n) break;
      const char kind = in[off];
      std::string body = in.substr(off + 5, n);
      off += 5 + n;
      if (kind == 'J') {
        const auto j = nlohmann::json::parse(body, nullptr, false);
        if (j.is_object() && j.value("type", "") == "status") st.skipped = j.value("skipped", std::uint64_t{0});
      } else if (kind == 'F') {
        ++st.received;
        const auto h = parse_message(body);
        if (h.downscale > 1) ++st.downscaled;
        if (opt.playout) {
          buffer.emplace_back(std::move(body), h);
        } else if (!play(body, h, last_arrival)) {
          stop = true;
          break;
        }
      }
    }
    in.erase(0, off);
    if (stop) {
      st.stop_reason = "callback";
      break;
    }
  }
  if (st.min_buffer == 1 << 30) st.min_buffer = 0;
  if (intervals > 0) st.jitter_mean_ms = jitter_sum / intervals, st.interval_mean_ms = interval_sum / intervals;
  return st;
}

}  // namespace toru::stream
