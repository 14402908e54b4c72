// SPDX-License-Identifier: BSD-3-Clause
// websocketpp and asio are confined to this file: they are heavy to compile, and websocketpp 0.8
// is not valid C++20 (template-ids as destructor names), so this one file is built as C++17 and
// includes no toru header that needs C++20 (errors go through detail::throw_io_error).
#define ASIO_STANDALONE
#include "toru/stream/server.hpp"

#include <asio.hpp>
#include <websocketpp/config/asio_no_tls.hpp>
#include <websocketpp/server.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/log.hpp"
#include "toru/stream/transcode.hpp"

namespace toru::stream {

namespace {
using ws_server = websocketpp::server<websocketpp::config::asio>;
using json = nlohmann::json;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class... Args>
void log_line(fmt::format_string<Args...> f, Args&&... args) {
  log::write(log::level::warn, fmt::format(f, std::forward<Args>(args)...));
}

std::string tcp_header(char kind, std::size_t n) {
  std::string h(5, '\0');
  h[0] = kind;
  for (int i = 0; i < 4; ++i) h[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return h;
}
}  // namespace

struct server::impl {
  struct tcp_conn;
  struct session {
    int id = 0;
    std::string peer;
    ws_server::connection_ptr ws;
    std::shared_ptr<tcp_conn> tcp;
    std::unique_ptr<flow_controller> fc;
    std::unique_ptr<asio::steady_timer> timer;
    bool hello = false, closed = false, timer_armed = false;
    unsigned accept = all_codecs;  // codecs the viewer decodes (hello "accept"; raw always)
    double connected_at = 0, stall_since = 0;
    std::size_t last_buffered = 0;
    std::int64_t last_received = -1;  // as the viewer last reported
    std::uint64_t baseline_next = 0;  // paced = false: next seq to send
  };
  struct tcp_conn {
    explicit tcp_conn(asio::io_context& io) : sock(io) {}
    asio::ip::tcp::socket sock;
    std::deque<std::pair<std::string, message_ptr>> q;
    std::size_t queued = 0;
    bool writing = false;
    char rhdr[5] = {};
    std::string rbody;
  };

  frame_log& frames;
  server_options opt;
  asio::io_context io;
  ws_server ws;
  std::unique_ptr<asio::ip::tcp::acceptor> tcp_acceptor;
  asio::steady_timer housekeeping{io};
  std::thread thread;
  std::map<int, std::shared_ptr<session>> sessions;
  std::map<websocketpp::connection_hdl, int, std::owner_less<websocketpp::connection_hdl>> by_hdl;
  int next_id = 1;
  int http_port_ = -1, tcp_port_ = -1;
  mutable std::mutex m;  // counters and the status snapshot, read from other threads
  server_counters c;
  std::string status_snapshot = "{}";
  std::atomic<bool> notify_pending{false};
  // Recently transcoded messages (seq, scale, accepted codecs): viewers of the same kind share them.
  struct transcoded {
    std::uint64_t seq;
    int scale;
    unsigned accept;
    message_ptr msg;
  };
  std::deque<transcoded> xcache;

  impl(frame_log& f, server_options o) : frames(f), opt(std::move(o)) {
    ws.clear_access_channels(websocketpp::log::alevel::all);
    ws.clear_error_channels(websocketpp::log::elevel::all);
    ws.init_asio(&io);
    ws.set_reuse_addr(true);
    ws.set_max_message_size(opt.max_client_message);
    ws.set_max_http_body_size(opt.max_client_message);
    ws.set_open_handshake_timeout(static_cast<long>(opt.hello_timeout_s * 1000));
    // Browser viewers get the same congestion control as TCP viewers: once accepted, before the
    // handshake, so from the connection's first data on (socket_init runs before the accept).
    ws.set_tcp_pre_init_handler([this](websocketpp::connection_hdl h) {
      auto& sock = ws.get_con_from_hdl(h)->get_raw_socket();
      asio::error_code ec;
      const auto ep = sock.remote_endpoint(ec);
      set_congestion_control(sock.native_handle(),
                             ec ? std::string("?") : fmt::format("{}:{}", ep.address().to_string(), ep.port()));
    });
    ws.set_http_handler([this](websocketpp::connection_hdl h) { on_http(h); });
    ws.set_open_handler([this](websocketpp::connection_hdl h) { on_ws_open(h); });
    ws.set_close_handler([this](websocketpp::connection_hdl h) { on_ws_close(h); });
    ws.set_fail_handler([this](websocketpp::connection_hdl h) { on_ws_close(h); });
    ws.set_message_handler([this](websocketpp::connection_hdl h, ws_server::message_ptr msg) {
      auto it = by_hdl.find(h);
      if (it == by_hdl.end()) return;
      auto s = sessions.at(it->second);
      if (msg->get_opcode() != websocketpp::frame::opcode::text)
        return drop(s, "sent a binary message (expected JSON text)", true);
      on_message(s, msg->get_payload());
    });
    try {
      if (opt.http_port >= 0) {
        ws.listen(
            asio::ip::tcp::endpoint(asio::ip::make_address(opt.address), static_cast<unsigned short>(opt.http_port)));
        ws.start_accept();
        asio::error_code ec;
        http_port_ = ws.get_local_endpoint(ec).port();
      }
      if (opt.tcp_port >= 0) {
        tcp_acceptor = std::make_unique<asio::ip::tcp::acceptor>(
            io,
            asio::ip::tcp::endpoint(asio::ip::make_address(opt.address), static_cast<unsigned short>(opt.tcp_port)));
        tcp_port_ = tcp_acceptor->local_endpoint().port();
        accept_tcp();
      }
    } catch (const std::exception& e) {
      detail::throw_io_error(fmt::format("stream server: cannot listen on {} (http port {}, tcp port {}): {}",
                                         opt.address, opt.http_port, opt.tcp_port, e.what()));
    }
    tick();
    thread = std::thread([this] { run(); });
  }

  ~impl() {
    asio::post(io, [this] {
      if (http_port_ >= 0) {
        websocketpp::lib::error_code ec;
        ws.stop_listening(ec);
      }
      if (tcp_acceptor) tcp_acceptor->close();
      for (auto& [id, s] : std::map(sessions)) close_session(s);
      housekeeping.cancel();
      io.stop();
    });
    if (thread.joinable()) thread.join();
  }

  void run() {
    while (true) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        // A handler must never take the server down: log and keep serving.
        log_line("toru::stream: server: {}", e.what());
      }
    }
  }

  // --- sessions ----------------------------------------------------------------------------------
  std::shared_ptr<session> new_session(std::string peer) {
    auto s = std::make_shared<session>();
    s->id = next_id++;
    s->peer = std::move(peer);
    s->connected_at = s->stall_since = now_s();
    s->timer = std::make_unique<asio::steady_timer>(io);
    sessions[s->id] = s;
    std::lock_guard lock(m);
    ++c.connections;
    return s;
  }

  std::size_t buffered(const session& s) const {
    if (s.ws) return s.ws->get_buffered_amount();
    if (s.tcp) return s.tcp->queued;
    return 0;
  }

  void close_session(const std::shared_ptr<session>& s) {
    if (s->closed) return;
    s->closed = true;
    s->timer->cancel();
    if (s->ws) {
      websocketpp::lib::error_code ec;
      if (s->ws->get_state() == websocketpp::session::state::open)
        s->ws->close(websocketpp::close::status::policy_violation, "", ec);
      by_hdl.erase(s->ws->get_handle());
    }
    if (s->tcp) {
      asio::error_code ec;
      s->tcp->sock.close(ec);
    }
    sessions.erase(s->id);
    std::lock_guard lock(m);
    if (s->hello) --c.viewers;
  }

  void drop(const std::shared_ptr<session>& s, std::string_view why, bool bad_input) {
    log_line("toru::stream: viewer {} ({}) {}: connection dropped", s->id, s->peer, why);
    {
      std::lock_guard lock(m);
      ++c.dropped;
      if (bad_input) ++c.bad_messages;
    }
    close_session(s);
  }

  void send_text(const std::shared_ptr<session>& s, const std::string& text) {
    if (s->ws) {
      s->ws->send(text, websocketpp::frame::opcode::text);
    } else if (s->tcp) {
      tcp_write(s, tcp_header('J', text.size()), std::make_shared<const std::string>(text));
    }
  }

  void send_frame(const std::shared_ptr<session>& s, const message_ptr& msg) {
    if (s->ws) {
      s->ws->send(msg->data(), msg->size(), websocketpp::frame::opcode::binary);
    } else if (s->tcp) {
      tcp_write(s, tcp_header('F', msg->size()), msg);
    }
    std::lock_guard lock(m);
    ++c.frames_sent;
  }

  // --- control messages --------------------------------------------------------------------------
  void on_message(const std::shared_ptr<session>& s, std::string_view text) {
    if (text.size() > opt.max_client_message) return drop(s, "sent an oversized message", true);
    const json j = json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
      return drop(s, "sent a malformed message (expected a JSON object with a \"type\")", true);
    const std::string type = j["type"];
    try {
      if (type == "hello") {
        if (s->hello) return drop(s, "sent a second hello", true);
        flow_options f = opt.flow;
        if (j.contains("fps")) f.fps = j["fps"].get<double>();
        if (j.contains("policy")) f.policy = parse_adapt_policy(j["policy"].get<std::string>(), "hello.policy");
        if (j.contains("low_water")) f.low_water = j["low_water"].get<int>();
        if (j.contains("high_water")) f.high_water = j["high_water"].get<int>();
        if (j.contains("latency")) f.latency_s = j["latency"].get<double>();
        if (j.contains("accept")) s->accept = codec_mask(j["accept"].get<std::vector<std::string>>(), "hello.accept");
        bool live = true;
        std::uint64_t from = 0;
        if (j.contains("from") && !(j["from"].is_string() && j["from"] == "live")) {
          from = j["from"].get<std::uint64_t>();
          live = false;
        }
        s->fc = std::make_unique<flow_controller>(f, live, from);
        s->hello = true;
        s->baseline_next = frames.end();
        {
          std::lock_guard lock(m);
          ++c.viewers;
        }
        send_status(s);
        pump(s);
        return;
      }
      if (!s->hello) return drop(s, fmt::format("sent '{}' before hello", type), true);
      if (type == "report") {
        // A viewer whose received count grows is reading, however slow its link: on a link of a
        // few kbit/s the kernel may take longer than stall_timeout_s to free enough socket buffer
        // for the next write to complete, and that alone must not drop it.
        const auto received = j.value("received", std::int64_t{-1});
        if (received > s->last_received) s->stall_since = now_s(), s->last_received = received;
        s->fc->report(now_s(), j.at("buffer").get<int>(), j.value("position", std::uint64_t{0}), j.value("fps", 0.0),
                      j.value("received", std::int64_t{-1}));
      } else if (type == "seek") {
        s->fc->seek(j.at("seq").get<std::uint64_t>(), false);
      } else if (type == "live") {
        s->fc->seek(0, true);
      } else if (type == "pause" || type == "play") {
        s->fc->pause(type == "pause");
      } else {
        return drop(s, fmt::format("sent an unknown message type '{}'", type.substr(0, 32)), true);
      }
    } catch (const std::exception& e) {
      return drop(s, fmt::format("sent a malformed '{}' message ({})", type.substr(0, 32), e.what()), true);
    }
    pump(s);
  }

  // --- sending -------------------------------------------------------------------------------------
  void pump(const std::shared_ptr<session>& s) {
    if (s->closed || !s->hello) return;
    if (!opt.paced) return pump_baseline(s);
    const double now = now_s();
    for (int burst = 0; burst < 64; ++burst) {
      const auto d = s->fc->next(now, frames, buffered(*s));
      if (d.kind == flow_decision::idle) return;
      if (d.kind == flow_decision::wait) {
        s->timer->expires_after(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(std::max(0.0, d.at - now))));
        std::weak_ptr<session> w = s;
        s->timer->async_wait([this, w](const asio::error_code& ec) {
          if (ec) return;
          if (auto sp = w.lock()) pump(sp);
        });
        return;
      }
      if (auto msg = for_viewer(*s, d.seq, d.scale)) send_frame(s, msg);
      s->fc->sent(now, d.seq);
    }
  }

  // The baseline of the benchmarks: every frame as soon as it exists, no pacing, no skipping.
  void pump_baseline(const std::shared_ptr<session>& s) {
    const auto end = frames.end();
    for (; s->baseline_next < end; ++s->baseline_next)
      if (auto msg = for_viewer(*s, s->baseline_next, 1)) send_frame(s, msg);
  }

  // Frame seq as this viewer takes it (reduced resolution, codecs it decodes); null if gone or
  // if it cannot be transcoded (logged; the viewer misses that frame, the others do not).
  message_ptr for_viewer(const session& s, std::uint64_t seq, int scale) {
    auto msg = frames.get(seq);
    if (!msg || (scale == 1 && s.accept == all_codecs)) return msg;
    for (const auto& x : xcache)
      if (x.seq == seq && x.scale == scale && x.accept == s.accept) return x.msg;
    try {
      auto out = transcode(msg, scale, s.accept);
      if (out != msg) {
        xcache.push_back({seq, scale, s.accept, out});
        if (xcache.size() > 16) xcache.pop_front();
      }
      return out;
    } catch (const std::exception& e) {
      log_line("toru::stream: frame {} not transcoded for viewer {}: {}", seq, s.id, e.what());
      return nullptr;
    }
  }

  void on_notify() {
    notify_pending = false;
    for (auto& [id, s] : std::map(sessions)) pump(s);
  }

  // The congestion control the kernel applies to the viewer's connection (read back, not assumed).
  static std::string congestion_of(int fd) {
    char name[32] = {};
    socklen_t n = sizeof name - 1;
    if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &n) != 0) return "";
    return std::string(name, ::strnlen(name, n));
  }
  int native_fd(const session& s) const {
    if (s.ws) return const_cast<session&>(s).ws->get_raw_socket().native_handle();
    if (s.tcp) return s.tcp->sock.native_handle();
    return -1;
  }

  json session_json(const session& s, double now) const {
    json j{{"id", s.id},
           {"peer", s.peer},
           {"transport", s.ws ? "websocket" : "tcp"},
           {"buffered_bytes", buffered(s)},
           {"congestion", congestion_of(native_fd(s))}};
    if (s.fc) {
      const auto& k = s.fc->counters();
      j.update({{"live", s.fc->live()},
                {"cursor", s.fc->cursor() == UINT64_MAX ? json(nullptr) : json(s.fc->cursor())},
                {"sent", k.sent},
                {"skipped", k.skipped},
                {"decimation", k.decimation},
                {"scale", k.scale},
                {"target_buffer", s.fc->target_frames()},
                {"buffer_estimate", s.fc->estimated_buffer(now)},
                {"policy", std::string(to_string(s.fc->options().policy))},
                {"fps", s.fc->fps()}});
    }
    return j;
  }

  void send_status(const std::shared_ptr<session>& s) {
    json j = session_json(*s, now_s());
    j["type"] = "status";
    j["first"] = frames.first();
    j["end"] = frames.end();
    send_text(s, j.dump());
  }

  // Every 100 ms: timeouts, status messages, the status snapshot; and a tailing log's new frames.
  void tick() {
    housekeeping.expires_after(std::chrono::milliseconds(100));
    housekeeping.async_wait([this](const asio::error_code& ec) {
      if (ec) return;
      const double now = now_s();
      static thread_local int n = 0;
      const bool status_due = ++n % 5 == 0;
      json all = json::array();
      for (auto& [id, s] : std::map(sessions)) {
        if (!s->hello && now - s->connected_at > opt.hello_timeout_s) {
          drop(s, fmt::format("sent no hello within {} s", opt.hello_timeout_s), true);
          continue;
        }
        const auto b = buffered(*s);
        if (b == 0 || b < s->last_buffered) s->stall_since = now;
        s->last_buffered = b;
        if (now - s->stall_since > opt.stall_timeout_s) {
          drop(s, fmt::format("read nothing for {} s ({} bytes waiting)", opt.stall_timeout_s, b), false);
          continue;
        }
        if (s->hello && status_due && b < opt.flow.max_buffered_bytes) send_status(s);
        if (s->hello) all.push_back(session_json(*s, now));
      }
      {
        std::lock_guard lock(m);
        json st{{"first", frames.first()},      {"end", frames.end()},  {"viewers", all},
                {"connections", c.connections}, {"dropped", c.dropped}, {"bad_messages", c.bad_messages},
                {"frames_sent", c.frames_sent}};
        status_snapshot = st.dump();
      }
      tick();
    });
  }

  // --- HTTP + WebSocket ----------------------------------------------------------------------------
  void on_http(websocketpp::connection_hdl h) {
    auto con = ws.get_con_from_hdl(h);
    std::string res = con->get_resource();
    res = res.substr(0, res.find('?'));  // the page reads its query (fps, policy, ...) itself
    if (res == "/" || res == "/index.html") {
      con->set_status(websocketpp::http::status_code::ok);
      con->append_header("Content-Type", "text/html; charset=utf-8");
      con->append_header("Cache-Control", "no-store");
      std::string page(viewer_page());
      for (auto at = page.find("@TITLE@"); at != std::string::npos; at = page.find("@TITLE@", at + opt.title.size()))
        page.replace(at, 7, opt.title);
      con->set_body(page);
    } else if (res == "/hold") {
      // For headless browsers (tests): a resource that answers after ?ms=N (at most 30 s), so the
      // page's load event, and with it --dump-dom or --screenshot, waits while frames play.
      const std::string full = con->get_resource();
      const auto at = full.find("ms=");
      long ms = at == std::string::npos ? 0 : std::strtol(full.c_str() + at + 3, nullptr, 10);
      ms = std::clamp(ms, 0L, 30000L);
      con->defer_http_response();
      auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(ms));
      timer->async_wait([con, timer](const asio::error_code&) {
        con->set_status(websocketpp::http::status_code::no_content);
        websocketpp::lib::error_code ec;
        con->send_http_response(ec);
      });
    } else if (res == "/status") {
      con->set_status(websocketpp::http::status_code::ok);
      con->append_header("Content-Type", "application/json");
      std::lock_guard lock(m);
      con->set_body(status_snapshot);
    } else {
      con->set_status(websocketpp::http::status_code::not_found);
      con->set_body("not found\n");
    }
  }

  void on_ws_open(websocketpp::connection_hdl h) {
    auto con = ws.get_con_from_hdl(h);
    if (sessions.size() >= opt.max_viewers) {
      log_line("toru::stream: refused a viewer from {}: {} viewers already (max_viewers)", con->get_remote_endpoint(),
               sessions.size());
      websocketpp::lib::error_code ec;
      con->close(websocketpp::close::status::try_again_later, "too many viewers", ec);
      return;
    }
    auto s = new_session(con->get_remote_endpoint());
    s->ws = con;
    by_hdl[h] = s->id;
  }

  void on_ws_close(websocketpp::connection_hdl h) {
    auto it = by_hdl.find(h);
    if (it == by_hdl.end()) return;
    auto s = sessions.at(it->second);
    // websocketpp itself closes on a frame it refuses (over max_client_message, not valid
    // WebSocket or UTF-8): that is bad input too, logged and counted like ours.
    const auto code = ws.get_con_from_hdl(h)->get_local_close_code();
    s->ws.reset();  // already closing: close_session must not close it again
    by_hdl.erase(it);
    namespace cs = websocketpp::close::status;
    if (code == cs::message_too_big || code == cs::protocol_error || code == cs::invalid_payload) {
      const std::string why = code == cs::message_too_big
                                  ? fmt::format("sent an oversized message (over {} bytes)", opt.max_client_message)
                                  : fmt::format("sent an invalid WebSocket frame (close code {})", code);
      return drop(s, why, true);
    }
    close_session(s);
  }

  // --- plain TCP -----------------------------------------------------------------------------------
  // The system default may not suit an application-limited stream sharing a link with bulk flows
  // (docs/history/benchmarks-2026-12.md#stream); an unknown or unavailable algorithm is logged once and ignored.
  void set_congestion_control(int fd, const std::string& peer) {
    if (opt.tcp_congestion.empty()) return;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, opt.tcp_congestion.data(),
                     static_cast<socklen_t>(opt.tcp_congestion.size())) != 0 &&
        !warned_congestion) {
      warned_congestion = true;
      log_line(
          "toru::stream: cannot use TCP congestion control '{}' for {}: {} (logged once; the system default "
          "is used)",
          opt.tcp_congestion, peer, std::strerror(errno));
    }
  }
  bool warned_congestion = false;

  void accept_tcp() {
    auto conn = std::make_shared<tcp_conn>(io);
    tcp_acceptor->async_accept(conn->sock, [this, conn](const asio::error_code& ec) {
      if (ec) {
        if (ec != asio::error::operation_aborted) accept_tcp();
        return;
      }
      asio::error_code e2;
      const auto ep = conn->sock.remote_endpoint(e2);
      const std::string peer = e2 ? "?" : fmt::format("{}:{}", ep.address().to_string(), ep.port());
      if (sessions.size() >= opt.max_viewers) {
        log_line("toru::stream: refused a viewer from {}: {} viewers already (max_viewers)", peer, sessions.size());
        conn->sock.close(e2);
      } else {
        conn->sock.set_option(asio::ip::tcp::no_delay(true), e2);
        set_congestion_control(conn->sock.native_handle(), peer);
        auto s = new_session(peer);
        s->tcp = conn;
        tcp_read(s);
      }
      accept_tcp();
    });
  }

  void tcp_read(const std::shared_ptr<session>& s) {
    auto conn = s->tcp;
    std::weak_ptr<session> w = s;
    asio::async_read(conn->sock, asio::buffer(conn->rhdr, 5), [this, w, conn](const asio::error_code& ec, std::size_t) {
      auto sp = w.lock();
      if (!sp || sp->closed) return;
      if (ec) return close_session(sp);
      std::uint32_t n = 0;
      for (int i = 0; i < 4; ++i)
        n |= static_cast<std::uint32_t>(static_cast<unsigned char>(conn->rhdr[1 + i])) << (8 * i);
      if (conn->rhdr[0] != 'J') return drop(sp, "sent a message that is not JSON (kind byte)", true);
      if (n > opt.max_client_message)
        return drop(sp, fmt::format("sent an oversized message ({} bytes, max {})", n, opt.max_client_message), true);
      conn->rbody.resize(n);
      asio::async_read(conn->sock, asio::buffer(conn->rbody),
                       [this, w, conn](const asio::error_code& ec2, std::size_t) {
                         auto sp2 = w.lock();
                         if (!sp2 || sp2->closed) return;
                         if (ec2) return close_session(sp2);
                         on_message(sp2, conn->rbody);
                         if (!sp2->closed) tcp_read(sp2);
                       });
    });
  }

  void tcp_write(const std::shared_ptr<session>& s, std::string header, message_ptr body) {
    auto conn = s->tcp;
    conn->queued += header.size() + body->size();
    conn->q.emplace_back(std::move(header), std::move(body));
    if (!conn->writing) tcp_write_next(s);
  }

  void tcp_write_next(const std::shared_ptr<session>& s) {
    auto conn = s->tcp;
    if (conn->q.empty()) {
      conn->writing = false;
      return;
    }
    conn->writing = true;
    const auto& [h, b] = conn->q.front();
    std::array<asio::const_buffer, 2> bufs{asio::buffer(h), asio::buffer(*b)};
    std::weak_ptr<session> w = s;
    asio::async_write(conn->sock, bufs, [this, w, conn](const asio::error_code& ec, std::size_t) {
      auto sp = w.lock();
      if (!sp || sp->closed) return;
      if (ec) return close_session(sp);
      conn->queued -= conn->q.front().first.size() + conn->q.front().second->size();
      conn->q.pop_front();
      tcp_write_next(sp);
      pump(sp);  // room on the connection again
    });
  }
};

server::server(frame_log& frames, server_options opt) : p_(std::make_unique<impl>(frames, std::move(opt))) {}
server::~server() = default;
int server::http_port() const { return p_->http_port_; }
int server::tcp_port() const { return p_->tcp_port_; }

void server::notify() {
  if (!p_->notify_pending.exchange(true)) asio::post(p_->io, [this] { p_->on_notify(); });
}

server_counters server::counters() const {
  std::lock_guard lock(p_->m);
  return p_->c;
}

std::string server::status_json() const {
  std::lock_guard lock(p_->m);
  return p_->status_snapshot;
}

}  // namespace toru::stream
