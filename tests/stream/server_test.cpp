// The server on loopback: several viewers at once (a stalled one never slows a live one and is
// dropped, with bounded memory meanwhile), a replay from the start is bit-identical to the
// recording, disconnect/reconnect, bad input (malformed, oversized, silent, non-JSON) drops only
// the offending connection, and the HTTP side serves the page and the status.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <thread>

#include <nlohmann/json.hpp>

#include "toru/stream/codec.hpp"
#include "toru/stream/publisher.hpp"
#include "toru/stream/viewer_client.hpp"

namespace ts = toru::stream;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

int raw_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void raw_send(int fd, char kind, const std::string& body, std::uint32_t claimed = UINT32_MAX) {
  const std::uint32_t n = claimed == UINT32_MAX ? static_cast<std::uint32_t>(body.size()) : claimed;
  std::string m(1, kind);
  for (int i = 0; i < 4; ++i) m.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  m += body;
  ASSERT_EQ(::send(fd, m.data(), m.size(), MSG_NOSIGNAL), static_cast<ssize_t>(m.size()));
}

// True once the server has closed fd (reads drain whatever it sent before).
bool closed_by_server(int fd, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  char buf[65536];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      const auto r = ::recv(fd, buf, sizeof buf, 0);
      if (r <= 0) return true;
    }
  }
  return false;
}

std::string http_get(int port, const std::string& path) {
  const int fd = raw_connect(port);
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 3000) <= 0) break;
    const auto r = ::recv(fd, buf, sizeof buf, 0);
    if (r <= 0) break;
    out.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  return out;
}

std::vector<float> field(int n, int step) {
  std::mt19937 g(static_cast<unsigned>(step));
  std::vector<float> v(static_cast<std::size_t>(n) * n);
  for (auto& x : v) x = std::normal_distribution<float>(0, 1)(g);
  return v;
}

std::string fresh_dir(const std::string& name) {
  const auto d = (fs::temp_directory_path() / ("toru-stream-srv-" + name + "-" + std::to_string(::getpid()))).string();
  fs::remove_all(d);
  return d;
}

}  // namespace

TEST(StreamServer, ReplayFromTheStartIsBitIdenticalToTheRecording) {
  const auto dir = fresh_dir("replay");
  ts::publisher pub({.image_encoding = ts::codec::zstd,
                     .record_dir = dir,
                     .sync = ts::sync_policy::none,
                     .server = {.address = "127.0.0.1", .http_port = -1, .tcp_port = 0}});
  const int n = 37, frames = 60;
  for (int s = 0; s < frames; ++s) {
    const auto f = field(n, s);
    ASSERT_EQ(pub.publish(ts::make_frame<float>("slice", s, 0.1 * s, {n, n}, f)), ts::push_result::queued);
    ASSERT_TRUE(pub.flush());  // the producer here is slower than the encoder: nothing may be dropped
  }
  ASSERT_EQ(pub.counters().recorded, static_cast<std::uint64_t>(frames));
  std::vector<std::string> got;
  const auto st = ts::run_viewer({.port = pub.tcp_port(),
                                  .from = "0",
                                  .fps = 500,
                                  .policy = "catch-up",
                                  .max_frames = frames,
                                  .idle_timeout_s = 5},
                                 [&](const std::string& m, const ts::frame_header&) {
                                   got.push_back(m);
                                   return true;
                                 });
  ASSERT_EQ(got.size(), static_cast<std::size_t>(frames)) << st.stop_reason;
  for (int s = 0; s < frames; ++s) {
    EXPECT_EQ(got[s], *pub.store()->get(s)) << "frame " << s;
    std::string_view payload;
    const auto h = ts::parse_message(got[s], &payload);
    EXPECT_EQ(h.step, s);
    const auto data = ts::decode_payload(h, payload);
    const auto ref = field(n, s);
    ASSERT_EQ(data.size(), ref.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(data.data(), ref.data(), data.size()), 0) << "frame " << s;
  }
  fs::remove_all(dir);
}

TEST(StreamServer, StalledViewerNeverSlowsTheProducerOrALiveViewer) {
  ts::publisher pub({.queue_slots = 2,
                     .image_encoding = ts::codec::raw,
                     .server = {.address = "127.0.0.1",
                                .http_port = -1,
                                .tcp_port = 0,
                                .flow = {.fps = 50, .max_buffered_bytes = 1 << 20},
                                .stall_timeout_s = 2}});
  // A viewer that says hello and then reads nothing.
  const int stalled = raw_connect(pub.tcp_port());
  ASSERT_GE(stalled, 0);
  raw_send(stalled, 'J', R"({"type":"hello","from":"live","fps":1000,"low_water":1,"high_water":100000})");
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> published{0}, returned{0};
  const int n = 256;  // 256 KiB frames
  std::thread producer([&] {
    std::vector<float> f(static_cast<std::size_t>(n) * n, 1.0f);
    for (int s = 0; !stop; ++s) {
      f[0] = static_cast<float>(s);
      ++published;
      pub.publish(ts::make_frame<float>("f", s, s, {n, n}, f));
      ++returned;
      std::this_thread::sleep_for(5ms);
    }
  });
  std::atomic<std::size_t> max_buffered{0};
  std::thread sampler([&] {
    for (int i = 0; i < 60 && !stop; ++i) {
      const auto st = nlohmann::json::parse(pub.get_server()->status_json());
      for (const auto& v : st.value("viewers", nlohmann::json::array()))
        max_buffered = std::max<std::size_t>(max_buffered, v.value("buffered_bytes", std::size_t{0}));
      std::this_thread::sleep_for(50ms);
    }
  });
  const auto live = ts::run_viewer({.port = pub.tcp_port(), .fps = 50, .seconds = 3},
                                   [](const std::string&, const ts::frame_header&) { return true; });
  sampler.join();
  EXPECT_GT(live.played, 60u) << live.stop_reason;  // about 50 fps for ~3 s minus start-up
  // The stalled viewer is dropped once it has read nothing for stall_timeout_s.
  EXPECT_TRUE(closed_by_server(stalled, 5s));
  stop = true;
  producer.join();
  ::close(stalled);
  const auto c = pub.counters();
  // By counting: every publish returned, and every frame offered is accounted for.
  EXPECT_EQ(published.load(), returned.load());
  EXPECT_EQ(c.offered, published.load());
  EXPECT_EQ(c.offered, c.queued + c.refused);  // latest_wins: every frame found a slot (2 slots, 1 consumer)
  EXPECT_EQ(c.refused, 0u);
  ASSERT_TRUE(pub.flush());
  const auto f = pub.counters();
  EXPECT_EQ(f.queued, f.encoded + f.dropped);  // each queued frame was encoded or replaced by a newer one
  // Memory stayed bounded: the server never held more than max_buffered_bytes + one frame for a viewer.
  EXPECT_GT(max_buffered.load(), 0u);
  EXPECT_LE(max_buffered.load(), (1u << 20) + n * n * sizeof(float) + 1024);
  EXPECT_GE(pub.get_server()->counters().dropped, 1u);
}

TEST(StreamServer, BadInputDropsOnlyTheOffender) {
  ts::publisher pub(
      {.image_encoding = ts::codec::raw,
       .server = {
           .address = "127.0.0.1", .http_port = 0, .tcp_port = 0, .hello_timeout_s = 0.5, .max_client_message = 1024}});
  std::vector<float> f(64, 2.0f);
  pub.publish(ts::make_frame<float>("f", 0, 0, {8, 8}, f));
  pub.flush();
  const auto before = pub.get_server()->counters();

  const int malformed = raw_connect(pub.tcp_port());
  raw_send(malformed, 'J', "{not json");
  EXPECT_TRUE(closed_by_server(malformed, 3s));
  const int not_object = raw_connect(pub.tcp_port());
  raw_send(not_object, 'J', "[1,2,3]");
  EXPECT_TRUE(closed_by_server(not_object, 3s));
  const int wrong_field = raw_connect(pub.tcp_port());
  raw_send(wrong_field, 'J', R"({"type":"hello","fps":"fast"})");
  EXPECT_TRUE(closed_by_server(wrong_field, 3s));
  const int before_hello = raw_connect(pub.tcp_port());
  raw_send(before_hello, 'J', R"({"type":"report","buffer":3})");
  EXPECT_TRUE(closed_by_server(before_hello, 3s));
  const int oversized = raw_connect(pub.tcp_port());
  raw_send(oversized, 'J', "", 100u << 20);  // claims 100 MiB: refused before any allocation
  EXPECT_TRUE(closed_by_server(oversized, 3s));
  const int binary = raw_connect(pub.tcp_port());
  raw_send(binary, 'F', "xxxx");
  EXPECT_TRUE(closed_by_server(binary, 3s));
  const int silent = raw_connect(pub.tcp_port());  // connects and sends nothing
  EXPECT_TRUE(closed_by_server(silent, 3s));
  const int silent_http = raw_connect(pub.http_port());  // the same on the HTTP/WebSocket port
  EXPECT_TRUE(closed_by_server(silent_http, 5s));
  for (int fd : {malformed, not_object, wrong_field, before_hello, oversized, binary, silent, silent_http}) ::close(fd);

  const auto after = pub.get_server()->counters();
  EXPECT_GE(after.bad_messages - before.bad_messages, 7u);
  // The server still serves a well-behaved viewer.
  const auto ok = ts::run_viewer(
      {.port = pub.tcp_port(), .from = "0", .fps = 100, .low_water = 1, .max_frames = 1, .idle_timeout_s = 5},
      [](const std::string&, const ts::frame_header& h) { return h.name == "f"; });
  EXPECT_EQ(ok.played, 1u) << ok.stop_reason;
}

TEST(StreamServer, ViewersDisconnectAndReconnect) {
  ts::publisher pub({.image_encoding = ts::codec::raw,
                     .server = {.address = "127.0.0.1", .http_port = -1, .tcp_port = 0, .flow = {.fps = 100}}});
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    std::vector<double> v(100);
    for (int s = 0; !stop; ++s) {
      pub.publish(ts::make_frame<double>("spectrum", s, s, {100}, v));
      std::this_thread::sleep_for(10ms);
    }
  });
  std::uint64_t last = 0;
  for (int round = 0; round < 3; ++round) {
    const auto st =
        ts::run_viewer({.port = pub.tcp_port(), .fps = 100, .low_water = 2, .max_frames = 10, .idle_timeout_s = 5},
                       [&](const std::string&, const ts::frame_header& h) {
                         last = h.seq;
                         return true;
                       });
    EXPECT_EQ(st.played, 10u) << "round " << round << ": " << st.stop_reason;
  }
  stop = true;
  producer.join();
  EXPECT_GT(last, 20u);
  EXPECT_GE(pub.get_server()->counters().connections, 3u);
}

TEST(StreamServer, HttpServesThePageAndTheStatus) {
  ts::publisher pub({.server = {.address = "127.0.0.1", .http_port = 0, .tcp_port = -1, .title = "unit test"}});
  const auto page = http_get(pub.http_port(), "/");
  EXPECT_NE(page.find("200 OK"), std::string::npos);
  EXPECT_NE(page.find("<title>unit test</title>"), std::string::npos);
  EXPECT_NE(page.find("new WebSocket"), std::string::npos);
  std::this_thread::sleep_for(300ms);  // the status snapshot is refreshed every 100 ms
  const auto status = http_get(pub.http_port(), "/status");
  const auto body = status.substr(status.find("\r\n\r\n") + 4);
  const auto j = nlohmann::json::parse(body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << status;
  EXPECT_TRUE(j.contains("viewers"));
  EXPECT_NE(http_get(pub.http_port(), "/nothing").find("404"), std::string::npos);
}

TEST(StreamServer, OversizedFramesAreRefusedAndCounted) {
  ts::publisher pub({.max_frame_bytes = 1000, .serve = false});
  std::vector<double> big(200), fine(100);
  EXPECT_EQ(pub.publish(ts::make_frame<double>("big", 0, 0, {200}, big)), ts::push_result::refused_oversize);
  EXPECT_EQ(pub.publish(ts::make_frame<double>("fine", 1, 0, {100}, fine)), ts::push_result::queued);
  pub.flush();
  const auto c = pub.counters();
  EXPECT_EQ(c.refused, 1u);
  EXPECT_EQ(c.encoded, 1u);
}

// A viewer that decodes raw and PNG only (the browser page says so in its hello) gets a zstd
// stream as raw frames with the same values; a viewer that accepts everything gets the recording.
TEST(StreamServer, ViewersThatAcceptOnlyRawGetZstdFramesAsRaw) {
  const auto dir = fresh_dir("accept");
  ts::publisher pub({.encoding = ts::codec::lz4,
                     .image_encoding = ts::codec::zstd,
                     .record_dir = dir,
                     .sync = ts::sync_policy::none,
                     .server = {.address = "127.0.0.1", .http_port = -1, .tcp_port = 0}});
  const int n = 19, frames = 8;
  for (int s = 0; s < frames; ++s) {
    const auto f = field(n, s);
    pub.publish(ts::make_frame<float>("slice", s, 0.1 * s, {n, n}, f));
    pub.publish(ts::make_frame<float>("row", s, 0.1 * s, {n}, std::span(f).first(n)));
    ASSERT_TRUE(pub.flush());
  }
  const int fd = raw_connect(pub.tcp_port());
  ASSERT_GE(fd, 0);
  raw_send(fd, 'J',
           R"({"type":"hello","from":0,"fps":200,"policy":"catch-up","accept":["raw","png"],"high_water":100})");
  std::string in;
  int got = 0;
  const auto until = std::chrono::steady_clock::now() + 10s;
  char buf[65536];
  while (got < 2 * frames && std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const auto r = ::recv(fd, buf, sizeof buf, 0);
    ASSERT_GT(r, 0);
    in.append(buf, static_cast<std::size_t>(r));
    while (in.size() >= 5) {
      std::uint32_t len = 0;
      for (int i = 0; i < 4; ++i) len |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[1 + i])) << (8 * i);
      if (in.size() < 5 + len) break;
      const std::string body = in.substr(5, len);
      const char kind = in[0];
      in.erase(0, 5 + len);
      if (kind != 'F') continue;
      std::string_view payload;
      const auto h = ts::parse_message(body, &payload);
      EXPECT_EQ(h.encoding, ts::codec::raw) << h.name;
      const auto ref = field(n, static_cast<int>(h.step));
      const std::size_t count = h.shape.size() == 2 ? ref.size() : static_cast<std::size_t>(n);
      ASSERT_EQ(payload.size(), count * sizeof(float));
      EXPECT_EQ(std::memcmp(payload.data(), ref.data(), payload.size()), 0) << h.name << " step " << h.step;
      ++got;
    }
  }
  ::close(fd);
  EXPECT_EQ(got, 2 * frames);
  // The recording keeps the codecs it was given.
  EXPECT_EQ(ts::parse_message(*pub.store()->get(0)).encoding, ts::codec::zstd);
  EXPECT_EQ(ts::parse_message(*pub.store()->get(1)).encoding, ts::codec::lz4);
  fs::remove_all(dir);
}
