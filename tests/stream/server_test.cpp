// SPDX-License-Identifier: BSD-3-Clause
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

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/stream/codec.hpp"
#include "toru/stream/publisher.hpp"
#include "toru/stream/segment_store.hpp"
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

// Takes one whole TCP message (u8 kind | u32 LE length | bytes, server.hpp) off the front of `in`;
// false while the next one has not fully arrived.
bool take_message(std::string& in, char& kind, std::string& body) {
  if (in.size() < 5) return false;
  std::uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[1 + i])) << (8 * i);
  if (in.size() < 5 + std::size_t{len}) return false;
  kind = in[0];
  body = in.substr(5, len);
  in.erase(0, 5 + std::size_t{len});
  return true;
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

// A WebSocket viewer by hand (RFC 6455): the upgrade, then masked frames. Returns -1 if the
// server did not switch protocols.
int ws_connect(int port) {
  const int fd = raw_connect(port);
  if (fd < 0) return -1;
  const std::string req =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos) {  // byte by byte: frames may follow the head
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 3000) <= 0 || ::recv(fd, &c, 1, 0) != 1) break;
    head += c;
  }
  if (head.rfind("HTTP/1.1 101", 0) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void ws_send(int fd, const std::string& body, int opcode = 1) {
  std::string m(1, static_cast<char>(0x80 | opcode));
  const unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
  if (body.size() < 126) {
    m.push_back(static_cast<char>(0x80 | body.size()));
  } else {
    m.push_back(static_cast<char>(0x80 | 126));
    m.push_back(static_cast<char>((body.size() >> 8) & 0xff));
    m.push_back(static_cast<char>(body.size() & 0xff));
  }
  m.append(reinterpret_cast<const char*>(mask), 4);
  for (std::size_t i = 0; i < body.size(); ++i) m.push_back(static_cast<char>(body[i] ^ mask[i % 4]));
  ASSERT_EQ(::send(fd, m.data(), m.size(), MSG_NOSIGNAL), static_cast<ssize_t>(m.size()));
}

nlohmann::json status_of(ts::publisher& pub) { return nlohmann::json::parse(pub.get_server()->status_json()); }

// Waits until the server's status lists `n` viewers (the snapshot is refreshed every 100 ms).
nlohmann::json wait_for_viewers(ts::publisher& pub, std::size_t n) {
  const auto until = std::chrono::steady_clock::now() + 5s;
  nlohmann::json st;
  do {
    st = status_of(pub);
    if (st.value("viewers", nlohmann::json::array()).size() >= n) break;
    std::this_thread::sleep_for(20ms);
  } while (std::chrono::steady_clock::now() < until);
  return st;
}

// Checks that message i of the store is frame step i of field(n, .) (decoded, bit for bit).
void expect_recorded_field(ts::publisher& pub, std::uint64_t i, int n, int step) {
  const auto m = pub.store()->get(i);
  ASSERT_TRUE(m) << "record " << i;
  std::string_view payload;
  const auto h = ts::parse_message(*m, &payload);
  ASSERT_EQ(h.seq, i);
  ASSERT_EQ(h.step, step);
  const auto data = ts::decode_payload(h, payload);
  const auto ref = field(n, step);
  ASSERT_EQ(data.size(), ref.size() * sizeof(float));
  ASSERT_EQ(std::memcmp(data.data(), ref.data(), data.size()), 0) << "record " << i;
}

// The bad-input tests' publisher: small client messages, a short hello timeout, one frame queued.
std::unique_ptr<ts::publisher> bad_input_publisher() {
  auto pub = std::make_unique<ts::publisher>(ts::publisher_options{
      .image_encoding = ts::codec::raw,
      .server = {
          .address = "127.0.0.1", .http_port = 0, .tcp_port = 0, .hello_timeout_s = 0.5, .max_client_message = 1024}});
  std::vector<float> f(64, 2.0f);
  pub->publish(ts::make_frame<float>("f", 0, 0, {8, 8}, f));
  pub->flush();
  return pub;
}

// After the offenders, the server still serves a well-behaved viewer.
void expect_serves_a_viewer(ts::publisher& pub) {
  const auto ok = ts::run_viewer(
      {.port = pub.tcp_port(), .from = "0", .fps = 100, .low_water = 1, .max_frames = 1, .idle_timeout_s = 5},
      [](const std::string&, const ts::frame_header& h) { return h.name == "f"; });
  EXPECT_EQ(ok.played, 1u) << ok.stop_reason;
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
  const auto owner = bad_input_publisher();
  ts::publisher& pub = *owner;
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
  expect_serves_a_viewer(pub);
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
    char kind = 0;
    std::string body;
    while (take_message(in, kind, body)) {
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

// Nothing lost: an encoder (zstd level 19) and a disk (fdatasync per frame) far slower than a
// producer that publishes back to back into 2 slots. The recorded stream's default policy (block)
// makes the producer wait for them, counts the wait, and every frame is recorded bit-identically.
TEST(StreamServer, SlowEncoderAndDiskRecordEveryFrame) {
  const auto dir = fresh_dir("slow");
  ts::publisher pub({.queue_slots = 2,
                     .image_encoding = ts::codec::zstd,
                     .zstd_level = 19,
                     .record_dir = dir,
                     .sync = ts::sync_policy::every_frame,
                     .serve = false});
  const int n = 96, frames = 40;
  std::vector<std::vector<float>> data;
  for (int s = 0; s < frames; ++s) data.push_back(field(n, s));
  for (int s = 0; s < frames; ++s)
    ASSERT_EQ(pub.publish(ts::make_frame<float>("slice", s, 0.1 * s, {n, n}, data[s])), ts::push_result::queued);
  ASSERT_TRUE(pub.flush(120));
  const auto c = pub.counters();
  EXPECT_EQ(c.offered, static_cast<std::uint64_t>(frames));
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(c.recorded, static_cast<std::uint64_t>(frames));
  EXPECT_EQ(c.acknowledged, static_cast<std::uint64_t>(frames));
  // A memcpy of 36 KiB against a level-19 compression and an fdatasync: the producer had to wait.
  EXPECT_GE(c.blocked, static_cast<std::uint64_t>(frames / 2));
  EXPECT_GT(c.blocked_s, 0.0);
  EXPECT_EQ(c.block_timeouts, 0u);
  ASSERT_EQ(pub.store()->size(), static_cast<std::uint64_t>(frames));
  for (int s = 0; s < frames; ++s) expect_recorded_field(pub, static_cast<std::uint64_t>(s), n, s);
  fs::remove_all(dir);
}

// The drop policy on a recorded stream: the same slow recorder, the producer never waits, and
// every frame is accounted for: recorded (bit-identical, in order) or dropped, counted.
TEST(StreamServer, DropPolicyIsCountedWhenTheRecorderFallsBehind) {
  const auto dir = fresh_dir("drop");
  ts::publisher pub({.queue_slots = 2,
                     .when_full = ts::full_policy::latest_wins,
                     .image_encoding = ts::codec::zstd,
                     .zstd_level = 19,
                     .record_dir = dir,
                     .sync = ts::sync_policy::every_frame,
                     .serve = false});
  const int n = 96, frames = 40;
  std::vector<std::vector<float>> data;
  for (int s = 0; s < frames; ++s) data.push_back(field(n, s));
  for (int s = 0; s < frames; ++s) pub.publish(ts::make_frame<float>("slice", s, 0.1 * s, {n, n}, data[s]));
  ASSERT_TRUE(pub.flush(120));
  const auto c = pub.counters();
  EXPECT_EQ(c.offered, static_cast<std::uint64_t>(frames));
  EXPECT_GT(c.dropped, 0u);
  EXPECT_EQ(c.blocked, 0u);
  EXPECT_EQ(c.recorded + c.dropped, c.offered);
  ASSERT_EQ(pub.store()->size(), c.recorded);
  std::int64_t last = -1;
  for (std::uint64_t i = 0; i < c.recorded; ++i) {
    const auto h = ts::parse_message(*pub.store()->get(i));
    ASSERT_GT(h.step, last);  // order kept, each frame once
    last = h.step;
    expect_recorded_field(pub, i, n, static_cast<int>(h.step));
  }
  EXPECT_EQ(last, frames - 1);  // the newest frame always gets through
  fs::remove_all(dir);
}

// Viewers that read nothing (TCP and WebSocket), asking for every frame from the start, never hold
// up the recorder: 300 frames of 64 KiB (19 MiB, far beyond what the server may queue for them or
// the sockets hold) are all recorded while neither has read a byte, with the lossless policy, so a
// recorder waiting on a viewer would hang this test. The server's memory per viewer stays bounded.
// Then the TCP viewer reads: it gets every frame from the recording, in order, bit-identical.
TEST(StreamServer, NonReadingViewersNeverHoldUpTheRecording) {
  const auto dir = fresh_dir("noread");
  const std::size_t max_buffered = 1 << 20;
  ts::publisher pub({.queue_slots = 2,
                     .image_encoding = ts::codec::raw,
                     .record_dir = dir,
                     .sync = ts::sync_policy::none,
                     .server = {.address = "127.0.0.1",
                                .http_port = 0,
                                .tcp_port = 0,
                                .flow = {.fps = 1000, .max_buffered_bytes = max_buffered},
                                .stall_timeout_s = 60}});
  const int tcp = raw_connect(pub.tcp_port());
  ASSERT_GE(tcp, 0);
  raw_send(tcp, 'J', R"({"type":"hello","from":0,"fps":1000,"policy":"catch-up","high_water":100000})");
  const int ws = ws_connect(pub.http_port());
  ASSERT_GE(ws, 0);
  ws_send(ws, R"({"type":"hello","from":0,"fps":1000,"policy":"catch-up","high_water":100000})");
  ASSERT_EQ(wait_for_viewers(pub, 2)["viewers"].size(), 2u);
  const int n = 128, frames = 300;
  std::vector<std::vector<float>> data;
  for (int s = 0; s < frames; ++s) data.push_back(field(n, s));
  std::size_t most = 0;
  // The viewers claim an empty buffer now and then (as a viewer that plays but whose link has
  // stopped would), so the server keeps sending until its per-viewer bound holds it.
  const std::string empty = R"({"type":"report","buffer":0})";
  for (int s = 0; s < frames; ++s) {
    ASSERT_EQ(pub.publish(ts::make_frame<float>("slice", s, 0.1 * s, {n, n}, data[s])), ts::push_result::queued);
    if (s % 20 == 0) {
      raw_send(tcp, 'J', empty);
      ws_send(ws, empty);
      const auto st = status_of(pub);
      for (const auto& v : st["viewers"]) most = std::max<std::size_t>(most, v.value("buffered_bytes", 0u));
    }
  }
  ASSERT_TRUE(pub.flush(60)) << "the recorder waited on a viewer";
  auto c = pub.counters();
  EXPECT_EQ(c.recorded, static_cast<std::uint64_t>(frames));
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(c.block_timeouts, 0u);
  // The catch-up sender keeps filling the sockets the viewers never read, so the server's own
  // buffer for them rises above 0 once the kernel's are full; sample until it does (or 10 s).
  const auto sample_until = std::chrono::steady_clock::now() + 10s;
  do {
    const auto now = wait_for_viewers(pub, 2);
    for (const auto& v : now["viewers"]) most = std::max<std::size_t>(most, v.value("buffered_bytes", 0u));
    if (most > 0) break;
    std::this_thread::sleep_for(50ms);
  } while (std::chrono::steady_clock::now() < sample_until);
  EXPECT_GT(most, 0u) << status_of(pub).dump();
  EXPECT_LE(most, max_buffered + n * n * sizeof(float) + 1024);
  EXPECT_EQ(status_of(pub)["viewers"].size(), 2u);  // slow, not dropped (stall_timeout_s = 60)
  ::close(ws);

  // The TCP viewer catches up from the recording: every frame, in order, bit-identical.
  std::string in;
  std::uint64_t got = 0;
  const auto until = std::chrono::steady_clock::now() + 30s;
  char buf[65536];
  auto last_report = std::chrono::steady_clock::now();
  while (got < static_cast<std::uint64_t>(frames) && std::chrono::steady_clock::now() < until) {
    if (std::chrono::steady_clock::now() - last_report > 50ms) {  // played all it got: send more
      raw_send(tcp, 'J', fmt::format(R"({{"type":"report","buffer":0,"received":{}}})", got));
      last_report = std::chrono::steady_clock::now();
    }
    pollfd p{tcp, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const auto r = ::recv(tcp, buf, sizeof buf, 0);
    ASSERT_GT(r, 0);
    in.append(buf, static_cast<std::size_t>(r));
    char kind = 0;
    std::string body;
    while (take_message(in, kind, body)) {
      if (kind != 'F') continue;
      ASSERT_EQ(body, *pub.store()->get(got)) << "frame " << got;
      ++got;
    }
  }
  ::close(tcp);
  EXPECT_EQ(got, static_cast<std::uint64_t>(frames));
  fs::remove_all(dir);
}

// The same bad input as over TCP, on the WebSocket side: malformed JSON, a binary message, a
// message before hello, an unknown type, a message over max_client_message, a viewer that
// upgrades and sends nothing. Each is dropped with a log line and counted; a good one is served.
TEST(StreamServer, BadWebSocketInputDropsOnlyTheOffender) {
  const auto owner = bad_input_publisher();
  ts::publisher& pub = *owner;
  const auto before = pub.get_server()->counters();
  std::vector<int> fds;
  auto expect_dropped = [&](const std::string& body, int opcode, const char* what) {
    const int fd = ws_connect(pub.http_port());
    ASSERT_GE(fd, 0) << what;
    fds.push_back(fd);
    if (!body.empty()) ws_send(fd, body, opcode);
    EXPECT_TRUE(closed_by_server(fd, 3s)) << what;
  };
  expect_dropped("{not json", 1, "malformed");
  expect_dropped("[1,2,3]", 1, "not an object");
  expect_dropped(R"({"type":"hello","fps":"fast"})", 1, "wrong field type");
  expect_dropped(R"({"type":"report","buffer":3})", 1, "before hello");
  expect_dropped(R"({"type":"hello"})", 2, "binary");
  expect_dropped(std::string(5000, ' '), 1, "oversized");
  expect_dropped("", 1, "silent");
  for (int fd : fds) ::close(fd);
  const auto after = pub.get_server()->counters();
  EXPECT_GE(after.bad_messages - before.bad_messages, 7u);
  EXPECT_GE(after.dropped - before.dropped, 7u);
  expect_serves_a_viewer(pub);
}

// A full disk under the lossless policy: frames the disk refuses are counted and logged once with
// a clear line, the simulation is not stalled (no publish waits for a timeout), and frames that fit
// are recorded. In a child process: the file-size limit stands in for the full disk.
TEST(StreamServer, FullDiskRefusesFramesAndNeverStallsThePublisher) {
  const auto dir = fresh_dir("fulldisk");
  const auto log_path = dir + ".log";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int lf = ::open(log_path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (lf < 0 || ::dup2(lf, 2) < 0) ::_exit(10);
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{64 << 10, 64 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(11);
    try {
      ts::publisher pub({.queue_slots = 2,
                         .block_timeout_s = 2,
                         .record_dir = dir,
                         .sync = ts::sync_policy::every_frame,
                         .serve = false});
      std::vector<double> v(750);  // 6000 bytes a frame: about 10 fit
      double slowest = 0;
      for (int s = 0; s < 40; ++s) {
        v[0] = s;
        const auto t0 = std::chrono::steady_clock::now();
        pub.publish(ts::make_frame<double>("spectrum", s, s, {750}, v));
        slowest = std::max(slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      if (!pub.flush(30)) ::_exit(12);
      const auto c = pub.counters();
      if (c.dropped != 0 || c.block_timeouts != 0) ::_exit(13);
      if (c.recorded < 5 || c.record_failures < 20 || c.recorded + c.record_failures != 40) ::_exit(14);
      if (slowest > 1.0) ::_exit(15);  // never waited anywhere near block_timeout_s
      ::_exit(0);
    } catch (...) {
      ::_exit(16);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the publisher crashed: signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream lf(log_path);
  const std::string log((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
  EXPECT_NE(log.find("the frame is refused and the simulation continues"), std::string::npos) << log;
  ts::segment_store r({.dir = dir, .read_only = true});
  EXPECT_GE(r.size(), 5u);
  fs::remove_all(dir);
  fs::remove(log_path);
}

// Both transports' connections get server_options::tcp_congestion, read back from the kernel
// (getsockopt on the server's socket, in /status); "" leaves the system's default.
TEST(StreamServer, CongestionControlAppliesToTcpAndWebSocketViewers) {
  auto read_file = [](const char* path) {
    std::ifstream f(path);
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
  };
  const std::string system_cc = read_file("/proc/sys/net/ipv4/tcp_congestion_control");
  std::istringstream allowed(
      read_file("/proc/sys/net/ipv4/tcp_allowed_congestion_control") + " " +
      (::geteuid() == 0 ? read_file("/proc/sys/net/ipv4/tcp_available_congestion_control") : ""));
  std::string other, a;
  while (allowed >> a)
    if (a != system_cc) {
      other = a;
      break;
    }
  if (system_cc.empty() || other.empty()) GTEST_SKIP() << "no second congestion control this process may set";
  for (const std::string& want : {other, std::string()}) {
    ts::publisher pub(
        {.serve = true, .server = {.address = "127.0.0.1", .http_port = 0, .tcp_port = 0, .tcp_congestion = want}});
    const int tcp = raw_connect(pub.tcp_port());
    raw_send(tcp, 'J', R"({"type":"hello"})");
    const int ws = ws_connect(pub.http_port());
    ASSERT_GE(ws, 0);
    ws_send(ws, R"({"type":"hello"})");
    const auto st = wait_for_viewers(pub, 2);
    ASSERT_EQ(st["viewers"].size(), 2u);
    std::set<std::string> transports;
    for (const auto& v : st["viewers"]) {
      transports.insert(v["transport"].get<std::string>());
      EXPECT_EQ(v["congestion"], want.empty() ? system_cc : want) << v.dump();
    }
    EXPECT_EQ(transports, (std::set<std::string>{"tcp", "websocket"}));
    ::close(tcp);
    ::close(ws);
  }
}
