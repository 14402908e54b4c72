// SPDX-License-Identifier: BSD-3-Clause
// toru-view: watch the frames a simulation streams (toru::stream), live or from its recording.
//
//   toru-view --store run/stream --port 8080              # serve a recording (tailed while it grows)
//   toru-view --demo --port 8080 --rate 20                 # a synthetic stream, to try the page
//   toru-view --connect host:9000 --dump frames/ --frames 100   # a TCP viewer writing frames to files
//
// Open http://host:8080/ in a browser: live images and line plots, a timeline to seek in the
// recording, play/pause, and the flow-control state.
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "toru/core/error.hpp"
#include "toru/stream/publisher.hpp"
#include "toru/stream/viewer_client.hpp"

namespace ts = toru::stream;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_signal(int) { interrupted = true; }

struct settings {
  std::string tcp_congestion = "cubic";
  std::string store, connect, dump, record, address = "0.0.0.0", from = "live", policy = "skip", codec = "raw";
  std::string image_codec = "png", buffer_log;
  bool demo = false, json = false, no_playout = false, unpaced = false, field_only = false;
  int port = 8080, tcp_port = -1, size = 64, low = 3, high = 10;
  double fps = 10, rate = 10, seconds = 0, latency = 1.0;
  std::uint64_t frames = 0;
};

ts::flow_options flow_of(const settings& s) {
  return {.fps = s.fps,
          .low_water = s.low,
          .high_water = s.high,
          .latency_s = s.latency,
          .policy = ts::parse_adapt_policy(s.policy, "--policy")};
}

ts::server_options server_of(const settings& s) {
  return {.address = s.address,
          .http_port = s.port,
          .tcp_port = s.tcp_port,
          .flow = flow_of(s),
          .paced = !s.unpaced,
          .tcp_congestion = s.tcp_congestion,
          .title = s.demo ? "toru-view demo" : "toru-view " + s.store};
}

void print_ports(const settings& s, int http, int tcp) {
  // One line a script can parse, on stdout, before serving.
  json j{{"http_port", http}, {"tcp_port", tcp}};
  if (s.json) {
    std::puts(j.dump().c_str());
  } else {
    if (http >= 0)
      fmt::print("toru-view: serving http://{}:{}/\n", s.address == "0.0.0.0" ? "localhost" : s.address, http);
    if (tcp >= 0) fmt::print("toru-view: TCP viewers on port {}\n", tcp);
  }
  std::fflush(stdout);
}

bool keep_going(const settings& s, std::chrono::steady_clock::time_point start) {
  return !interrupted && (s.seconds <= 0 ||
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < s.seconds);
}

int serve_store(const settings& s) {
  ts::segment_store store({.dir = s.store, .read_only = true});
  ts::frame_log log(64, &store);
  ts::server srv(log, server_of(s));
  print_ports(s, srv.http_port(), srv.tcp_port());
  const auto start = std::chrono::steady_clock::now();
  while (keep_going(s, start)) {
    if (log.refresh()) srv.notify();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (s.json) std::puts(srv.status_json().c_str());
  return 0;
}

// A travelling wave pattern and a k^-5/3 spectrum that breathes: enough to see the page move.
int serve_demo(const settings& s) {
  ts::publisher pub({.encoding = ts::parse_codec(s.codec, "--codec"),
                     .image_encoding = ts::parse_codec(s.image_codec, "--image-codec"),
                     .record_dir = s.record,
                     .server = server_of(s)});
  print_ports(s, pub.http_port(), pub.tcp_port());
  const int n = s.size;
  std::vector<float> field(static_cast<std::size_t>(n) * n);
  std::vector<double> spectrum(static_cast<std::size_t>(n / 2));
  const auto start = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(1.0 / s.rate);
  std::uint64_t step = 0;
  for (; keep_going(s, start) && (s.frames == 0 || step < s.frames); ++step) {
    const double t = static_cast<double>(step) / s.rate;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        field[static_cast<std::size_t>(i) * n + j] =
            static_cast<float>(std::sin(6.2832 * (i + 2 * t * n / 10.0) / n) * std::cos(6.2832 * 2 * j / n + t));
    for (std::size_t k = 0; k < spectrum.size(); ++k)
      spectrum[k] = (1 + 0.5 * std::sin(t)) * std::pow(static_cast<double>(k + 1), -5.0 / 3);
    const auto si = static_cast<std::int64_t>(step);
    pub.publish(ts::make_frame<float>("field", si, t, {n, n}, field));
    if (!s.field_only) pub.publish(ts::make_frame<double>("energy spectrum", si, t, {n / 2}, spectrum));
    std::this_thread::sleep_until(start + period * static_cast<double>(step + 1));
  }
  pub.flush();
  // Keep serving what was produced until the time limit (a replay needs a server after the last frame).
  while (keep_going(s, start) && s.seconds > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto c = pub.counters();
  if (s.json) {
    json j{
        {"frames", step},          {"offered", c.offered},   {"dropped", c.dropped},           {"refused", c.refused},
        {"encoded", c.encoded},    {"recorded", c.recorded}, {"acknowledged", c.acknowledged}, {"blocked", c.blocked},
        {"blocked_s", c.blocked_s}};
    if (pub.get_server()) j["server"] = json::parse(pub.get_server()->status_json());
    std::puts(j.dump().c_str());
  }
  return 0;
}

std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out;
}

int run_client(const settings& s) {
  const auto colon = s.connect.rfind(':');
  int port = 0;
  try {
    port = colon == std::string::npos ? -1 : std::stoi(s.connect.substr(colon + 1));
  } catch (const std::exception&) {
    port = -1;
  }
  toru::expect(port > 0 && port < 65536, "--connect", "HOST:PORT with a port 1..65535", s.connect);
  if (!s.dump.empty()) {
    std::error_code ec;
    fs::create_directories(s.dump, ec);
    if (!fs::is_directory(s.dump))
      throw toru::error(toru::errc::io, fmt::format("--dump: cannot create directory '{}'", s.dump));
  }
  std::ofstream index;
  if (!s.dump.empty()) index.open(s.dump + "/frames.jsonl", std::ios::trunc);
  const auto stats = ts::run_viewer(
      {.host = s.connect.substr(0, colon),
       .port = port,
       .from = s.from,
       .fps = s.fps,
       .low_water = s.low,
       .high_water = s.high,
       .latency_s = s.latency,
       .buffer_log = s.buffer_log,
       .policy = s.policy,
       .playout = !s.no_playout,
       .seconds = s.seconds,
       .max_frames = s.frames},
      [&](const std::string& msg, const ts::frame_header& h) {
        if (s.dump.empty()) return !interrupted.load();
        std::string_view payload;
        ts::parse_message(msg, &payload);
        const bool png = h.encoding == ts::codec::png;
        const std::string file = fmt::format("{:08}-{}.{}", h.seq, safe_name(h.name), png ? "png" : "bin");
        std::ofstream out(s.dump + "/" + file, std::ios::binary);
        if (png) {
          out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
        } else {
          const auto raw = ts::decode_payload(h, payload);
          out.write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
        }
        if (!out) throw toru::error(toru::errc::io, fmt::format("--dump: cannot write '{}/{}'", s.dump, file));
        index << json{{"seq", h.seq},
                      {"step", h.step},
                      {"time", h.time},
                      {"name", h.name},
                      {"shape", h.shape},
                      {"dtype", std::string(ts::to_string(h.type))},
                      {"codec", std::string(ts::to_string(h.encoding))},
                      {"downscale", h.downscale},
                      {"file", file}}
                     .dump()
              << '\n';
        return !interrupted.load();
      });
  json j{{"received", stats.received},
         {"played", stats.played},
         {"stalls", stats.stalls},
         {"skipped", stats.skipped},
         {"downscaled", stats.downscaled},
         {"start_frames", stats.start_frames},
         {"min_buffer", stats.min_buffer},
         {"first_play_s", stats.first_play_s},
         {"interval_mean_ms", stats.interval_mean_ms},
         {"jitter_mean_ms", stats.jitter_mean_ms},
         {"jitter_max_ms", stats.jitter_max_ms},
         {"stop", stats.stop_reason}};
  if (s.json)
    std::puts(j.dump().c_str());
  else
    fmt::print(
        "toru-view: played {} of {} frames received, {} stalls, {} skipped by the server, jitter mean {:.2f} "
        "ms max {:.2f} ms ({})\n",
        stats.played, stats.received, stats.stalls, stats.skipped, stats.jitter_mean_ms, stats.jitter_max_ms,
        stats.stop_reason);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"toru-view: watch the frames a simulation streams with toru::stream, live or from its recording",
               "toru-view"};
  auto* store = app.add_option("--store", s.store, "serve this recording directory (tailed while it grows)");
  auto* demo = app.add_flag("--demo", s.demo, "serve a synthetic stream (a travelling wave and a spectrum)");
  auto* connect = app.add_option("--connect", s.connect, "be a TCP viewer of HOST:PORT");
  store->excludes(demo)->excludes(connect);
  demo->excludes(connect);
  app.add_option("--dump", s.dump, "--connect: write every frame played to DIR (frames.jsonl + one file each)")
      ->needs(connect);
  app.add_option("--from", s.from, "--connect: 'live' or the frame number to replay from")->capture_default_str();
  app.add_option("--frames", s.frames, "stop after this many frames (0: no limit)");
  app.add_option("--seconds", s.seconds, "stop after this many seconds (0: no limit)")->check(CLI::NonNegativeNumber);
  app.add_flag("--no-playout", s.no_playout, "--connect: take frames as they arrive (no playout buffer)");
  app.add_option("--address", s.address, "address to listen on")->capture_default_str();
  app.add_option("--port", s.port, "HTTP + WebSocket port (0: any free port, -1: off)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app.add_option("--tcp-port", s.tcp_port, "plain TCP viewer port (0: any free port, -1: off)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app.add_option("--fps", s.fps, "playout rate (frames per second)")
      ->check(CLI::Range(0.1, 1000.0))
      ->capture_default_str();
  app.add_option("--low-water", s.low, "frames buffered before playout starts; below, the sender fills faster")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--high-water", s.high, "frames buffered at most; the sender holds there")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  app.add_option("--latency", s.latency,
                 "live: play this many seconds behind the newest frame (the start-up buffer and the level the "
                 "sender keeps; within the water marks)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--buffer-log", s.buffer_log, "--connect: write the buffer level over time to this CSV file")
      ->needs(connect);
  app.add_option("--policy", s.policy,
                 "a viewer that cannot keep up: skip (to the newest), decimate (fewer steps), resolution (smaller "
                 "images), catch-up")
      ->check(CLI::IsMember({"skip", "decimate", "resolution", "catch-up"}))
      ->capture_default_str();
  app.add_option("--tcp-congestion", s.tcp_congestion,
                 "serving: TCP congestion control for TCP viewers ('' for the system's default)")
      ->capture_default_str();
  app.add_flag("--unpaced", s.unpaced, "serve every frame the moment it exists (the benchmark baseline)");
  app.add_option("--rate", s.rate, "--demo: steps per second")->check(CLI::Range(0.01, 10000.0))->capture_default_str();
  app.add_option("--size", s.size, "--demo: field size N (N x N)")->check(CLI::Range(2, 8192))->capture_default_str();
  app.add_option("--codec", s.codec, "--demo: codec of 1-D frames")
      ->check(CLI::IsMember({"raw", "zstd", "lz4"}))
      ->capture_default_str();
  app.add_option("--image-codec", s.image_codec, "--demo: codec of 2-D frames")
      ->check(CLI::IsMember({"raw", "zstd", "lz4", "png"}))
      ->capture_default_str();
  app.add_option("--record", s.record, "--demo: also record to this directory");
  app.add_flag("--field-only", s.field_only, "--demo: one frame a step (no spectrum)");
  app.add_flag("--json", s.json, "machine-readable output (ports first, then a summary)");
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  return toru::apps::run_cli(app, argc, argv, [&] {
    if (s.low >= s.high)
      throw toru::error(toru::errc::invalid_argument,
                        fmt::format("--low-water: expected less than --high-water ({}), got {}", s.high, s.low));
    if (!s.connect.empty()) return run_client(s);
    if (!s.store.empty()) return serve_store(s);
    if (s.demo) return serve_demo(s);
    throw CLI::ValidationError("toru-view", "expected one of --store DIR, --demo or --connect HOST:PORT");
  });
}
