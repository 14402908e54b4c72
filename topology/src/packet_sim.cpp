// SPDX-License-Identifier: BSD-3-Clause
// The packet engine: a binary heap of timed events over links, router buffers, TCP connections (or
// credit-driven NICs) and the MPI-like operation layer. See packet_sim.hpp for the model.
#include "toru/topology/packet_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <unordered_map>

#include "toru/core/error.hpp"

namespace toru::topology {

int packet_schedule::add_op(int node, std::vector<int> after, std::string label) {
  ops.push_back({node, std::move(after), std::move(label)});
  return static_cast<int>(ops.size()) - 1;
}

void packet_schedule::add_message(int src, int dst, double bytes, int send_op, int recv_op) {
  messages.push_back({src, dst, bytes, send_op, recv_op});
}

std::int64_t packet_next_link(const torus& t, std::int64_t node, std::int64_t dst) {
  std::int64_t a = node, b = dst;
  for (int i = 0; i < t.ndims(); ++i) {
    const auto& ax = t[i];
    const auto D = static_cast<std::int64_t>(ax.extent);
    const std::int64_t ca = a % D, cb = b % D;
    a /= D;
    b /= D;
    if (ca == cb) continue;
    int dir;
    if (!ax.wrap) {
      dir = cb > ca ? 1 : -1;
    } else if (D == 2) {
      dir = ca == 0 ? 1 : -1;  // one link: + from 0, - from 1 (the two directions of it)
    } else {
      const std::int64_t delta = ((cb - ca) % D + D) % D;
      if (2 * delta == D)
        dir = ca % 2 == 0 ? 1 : -1;  // torus-netns.sh: ties + from even, - from odd coordinates
      else
        dir = 2 * delta < D ? 1 : -1;
    }
    return node * 2 * t.ndims() + 2 * i + (dir < 0 ? 1 : 0);
  }
  return -1;
}

namespace {

using i64 = std::int64_t;
constexpr double inf = std::numeric_limits<double>::infinity();

enum class ev : std::uint8_t {
  tx_done,
  arrive,
  credit,
  rto,
  pace,
  op_start,
  post_send,
  ctrl_send,
  rest_send,
  app_fill,
  probe,
  tlp,
  delack
};

struct event {
  double t;
  std::uint64_t seq;
  ev kind;
  i64 a, b;
  bool operator>(const event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct packet {
  int conn = -1;
  int src = 0, dst = 0;
  i64 start = 0;
  int len = 0;   // payload bytes
  int wire = 0;  // bytes on the wire
  bool ack = false;
  i64 ack_cum = 0, sack = -1;
  std::uint64_t order = 0;  // the connection's transmission number (loss detection)
};

// What a connection's byte stream carries, in order; delivered once the receiver has every byte up
// to `end`.
enum class item : std::uint8_t { eager_all, eager_first, rest, control };
struct stream_item {
  i64 end;
  int msg;
  item kind;
};

struct segment {
  int len;
  std::uint64_t order;
  double sent;
  double delivered = 0, delivered_time = 0;  // the connection's delivery counters when sent (BBR)
  double first_tx = 0;                       // send time of the last delivered segment, when sent
  bool sacked = false, lost = false, retransmitted = false;
  bool app_limited = false;  // sent while the flow had less to send than its window allowed
};

// BBR v1 (Cardwell et al. 2016, Linux tcp_bbr.c) reduced to what moves bytes: a windowed-max
// bandwidth filter over 10 round trips, the minimum RTT, startup / drain / probe_bw gains, pacing at
// gain x bandwidth and cwnd = cwnd_gain x BDP + 3 packets (at least 4). Loss does not shrink cwnd
// (BBR v1); a timeout sets it to one packet until data is acknowledged again.
struct bbr_state {
  enum class mode : std::uint8_t { startup, drain, probe_bw } m = mode::startup;
  std::deque<std::pair<std::uint64_t, double>> bw;  // (round, max delivery rate in that round)
  double min_rtt = inf, full_bw = 0, cycle_start = 0;
  int full_bw_count = 0, cycle = 0;
  std::uint64_t round = 0;
  double next_round_delivered = 0;
  bool rto_clamp = false;
  // Linux: delivered + in flight when the sender last ran out of data (0: not app-limited)
  double app_limited_until = 0;
  double prior_cwnd = 0;    // saved on entering recovery or loss, restored when it ends
  double pacing = 0;        // Linux: sk_pacing_rate (bbr_linux_state)
  bool conserving = false;  // first round of a recovery: packet conservation
};

struct connection {
  int src, dst;
  // sender
  i64 stream_end = 0, snd_nxt = 0, snd_una = 0;
  i64 written = 0;  // bytes the rank has handed to the kernel (socket_buffer > 0)
  bool fill_armed = false;
  double cwnd = 0, ssthresh = inf;
  std::map<i64, segment> out;  // outstanding segments by start offset
  i64 pipe = 0;                // bytes in flight: not sacked, not marked lost
  i64 lost_bytes = 0;          // marked lost, not yet resent
  std::uint64_t orders = 0;
  bool recovery = false;
  i64 recover = 0;
  double srtt = 0, rttvar = 0, rto = 0, last_send = -inf;
  double delivered = 0, delivered_time = 0, next_send = 0, first_tx = 0;
  bool pace_armed = false;
  bbr_state bbr;
  std::uint64_t rto_gen = 0, tlp_gen = 0;
  bool rto_armed = false, blocked = false;
  double in_qdisc = 0;  // small_queues: wire bytes of this connection in its first-hop queue
  bool tsq_throttled = false;
  // receiver
  i64 rcv_nxt = 0;
  i64 unacked = 0;  // delayed_ack: in-order bytes received since the last ACK
  int quickacks = 0;
  double last_rcv = -inf;
  std::uint64_t delack_gen = 0;
  std::map<i64, i64> ooo;  // out-of-order ranges
  std::deque<stream_item> items;
  // credit mode: bytes not yet packetized
  i64 credit_next = 0;
};

struct link_state {
  int from = 0, to = 0, axis = 0;
  double bw = 1, lat = 0;
  std::deque<int> queue;  // output queue (packet ids)
  double queued = 0, capacity = 0;
  bool busy = false;
  double busy_time = 0;
  double tokens = 0, token_time = 0;  // tcp: tc tbf's bucket
  double credits = 0;                 // credit mode: free bytes of the downstream input buffer
  std::deque<int> waiting;            // tcp: local connections blocked on this first hop
};

struct input_buffer {
  std::deque<int> q;
  double used = 0;
};

struct msg_state {
  bool recv_posted = false, eager_arrived = false, done = false;
  int parts_left = 0;  // rendezvous: parts of the rest not yet delivered
};

class engine {
 public:
  engine(const torus& t, const packet_schedule& s, const packet_params& p)
      : t_(t), s_(s), p_(p), P_(static_cast<int>(t.size())), nd_(t.ndims()) {
    validate();
    K_ = connections();
    if (p.seed != 0) {
      rng_.seed(p.seed);
      turn_.resize(static_cast<std::size_t>(P_));
      std::iota(turn_.begin(), turn_.end(), 0);
      std::shuffle(turn_.begin(), turn_.end(), rng_);
    }
    const auto nl = static_cast<std::size_t>(P_) * 2 * nd_;
    links_.resize(nl);
    for (int n = 0; n < P_; ++n)
      for (int i = 0; i < nd_; ++i)
        for (int d = 0; d < 2; ++d) {
          auto& l = links_[static_cast<std::size_t>(n) * 2 * nd_ + 2 * i + d];
          l.from = n;
          l.axis = i;
          l.bw = t[i].bandwidth;
          l.lat = t[i].latency;
          l.to = neighbour(n, i, d == 0 ? 1 : -1);
          l.capacity =
              tcp() ? (p.queue_bytes > 0 ? p.queue_bytes : l.bw * p.tbf_latency + p.tbf_burst) : p.output_bytes;
          l.credits = p.input_bytes;
          l.tokens = std::min(p.tbf_burst, p.tbf_initial_tokens);
        }
    if (!tcp()) {
      inputs_.resize(nl + static_cast<std::size_t>(P_));
      nic_conns_.resize(static_cast<std::size_t>(P_));
      rr_.assign(static_cast<std::size_t>(P_), 0);
      nic_rr_.assign(static_cast<std::size_t>(P_), 0);
    }
    msgs_.resize(s.messages.size());
    op_left_.assign(s.ops.size(), 0);
    op_deps_.assign(s.ops.size(), 0);
    dependents_.resize(s.ops.size());
    op_sends_.resize(s.ops.size());
    for (std::size_t o = 0; o < s.ops.size(); ++o)
      for (int a : s.ops[o].after) {
        dependents_[static_cast<std::size_t>(a)].push_back(static_cast<int>(o));
        ++op_deps_[o];
      }
    for (std::size_t m = 0; m < s.messages.size(); ++m) {
      const auto& msg = s.messages[m];
      op_left_[static_cast<std::size_t>(msg.send_op)] += 1;
      op_left_[static_cast<std::size_t>(msg.recv_op)] += 1;
      op_sends_[static_cast<std::size_t>(msg.send_op)].push_back(static_cast<int>(m));
    }
  }

  packet_result run() {
    for (std::size_t o = 0; o < s_.ops.size(); ++o)
      if (op_deps_[o] == 0) push(run_at(s_.ops[o].node, 0), ev::op_start, static_cast<i64>(o), 0);
    while (!heap_.empty()) {
      const event e = heap_.top();
      heap_.pop();
      now_ = e.t;
      if (now_ > p_.time_limit)
        throw error(errc::invalid_argument, fmt::format("packet simulation: not finished after {} simulated seconds "
                                                        "({} of {} operations complete)",
                                                        p_.time_limit, ops_done_, s_.ops.size()));
      ++r_.events;
      dispatch(e);
    }
    if (ops_done_ != s_.ops.size())
      throw error(errc::invalid_argument,
                  fmt::format("packet simulation: schedule stalled with {} of {} operations complete "
                              "(a receive without its send?)",
                              ops_done_, s_.ops.size()));
    r_.seconds = end_;
    r_.axis_utilisation.assign(static_cast<std::size_t>(nd_), 0.0);
    std::vector<int> nlinks(static_cast<std::size_t>(nd_), 0);
    for (const auto& l : links_) {
      if (l.to == l.from || l.to < 0) continue;
      const double u = end_ > 0 ? l.busy_time / end_ : 0;
      r_.max_link_utilisation = std::max(r_.max_link_utilisation, u);
      r_.axis_utilisation[static_cast<std::size_t>(l.axis)] += u;
      ++nlinks[static_cast<std::size_t>(l.axis)];
    }
    for (int i = 0; i < nd_; ++i)
      if (nlinks[static_cast<std::size_t>(i)] > 0)
        r_.axis_utilisation[static_cast<std::size_t>(i)] /= nlinks[static_cast<std::size_t>(i)];
    return r_;
  }

 private:
  const torus& t_;
  const packet_schedule& s_;
  const packet_params& p_;
  int P_, nd_, K_ = 1;
  double now_ = 0, end_ = 0;

 public:
  std::vector<double> op_end_;  // completion time per op, when the caller asks for it

 private:
  std::uint64_t seq_ = 0;
  std::priority_queue<event, std::vector<event>, std::greater<>> heap_;
  std::vector<link_state> links_;
  std::vector<input_buffer> inputs_;         // credit: [link] incoming buffers, [nlinks + node] injection
  std::vector<std::vector<int>> nic_conns_;  // credit: connections of a node with bytes to inject
  std::vector<std::size_t> rr_, nic_rr_;
  std::vector<packet> pkts_;
  std::vector<int> free_pkts_;
  std::vector<connection> conns_;
  std::unordered_map<i64, int> conn_index_;
  std::vector<msg_state> msgs_;
  std::vector<int> op_left_, op_deps_;
  std::vector<std::vector<int>> dependents_, op_sends_;
  std::size_t ops_done_ = 0;
  packet_result r_;

  bool tcp() const { return p_.mode == packet_params::transport::tcp; }

  // Host timing noise (packet_params::seed): reaction times and the ranks' turn order.
  std::mt19937_64 rng_;
  std::vector<int> turn_;  // node -> its place in the turn order (empty: by node number)
  double host_delay() {
    if (p_.seed == 0) return p_.host_delay;
    return p_.host_delay * (1 + p_.jitter * std::uniform_real_distribution<double>(-1, 1)(rng_));
  }

  void validate() {
    for (const auto& ax : t_.axes())
      if (ax.switched && ax.extent > 1)
        throw error(errc::unsupported, "simulate_packets: switched axes are not modelled (rings and meshes only)");
    expect(p_.connections_per_peer >= 0 && p_.stripe_connections >= 1, "packet_params",
           "connections_per_peer >= 0 and stripe_connections >= 1",
           fmt::format("{} and {}", p_.connections_per_peer, p_.stripe_connections));
    expect(p_.mss >= 1 && p_.header >= 0 && p_.eager_limit >= 0 && p_.host_delay >= 0 && p_.post_overhead >= 0,
           "packet_params", "mss >= 1 and non-negative header, eager_limit, host_delay, post_overhead", "a value");
    expect(p_.delack_timeout >= 0 && p_.quickacks >= 0 && p_.skb_overhead >= 0 && p_.jitter >= 0 && p_.jitter < 1,
           "packet_params", "delack_timeout, quickacks, skb_overhead >= 0 and jitter in [0, 1)",
           fmt::format("{}, {}, {}, {}", p_.delack_timeout, p_.quickacks, p_.skb_overhead, p_.jitter));
    if (p_.mode == packet_params::transport::credit)
      expect(p_.input_bytes >= p_.mss + p_.header && p_.output_bytes >= p_.mss + p_.header &&
                 p_.injection_bytes >= p_.mss + p_.header,
             "packet_params (credit)", "input, output and injection buffers of at least one packet",
             fmt::format("{}, {}, {}", p_.input_bytes, p_.output_bytes, p_.injection_bytes));
    const auto nops = static_cast<int>(s_.ops.size());
    for (int o = 0; o < nops; ++o) {
      const auto& op = s_.ops[static_cast<std::size_t>(o)];
      expect(op.node >= 0 && op.node < P_, fmt::format("packet_schedule op {}", o),
             fmt::format("a node in [0, {})", P_), std::to_string(op.node));
      for (int a : op.after)
        expect(a >= 0 && a < o, fmt::format("packet_schedule op {} after", o), "an earlier operation",
               std::to_string(a));
    }
    for (std::size_t m = 0; m < s_.messages.size(); ++m) {
      const auto& msg = s_.messages[m];
      const bool ok = msg.send_op >= 0 && msg.send_op < nops && msg.recv_op >= 0 && msg.recv_op < nops &&
                      s_.ops[static_cast<std::size_t>(msg.send_op)].node == msg.src &&
                      s_.ops[static_cast<std::size_t>(msg.recv_op)].node == msg.dst && msg.bytes >= 0;
      expect(ok, fmt::format("packet_schedule message {}", m),
             "a send op on its source node, a receive op on its destination node, bytes >= 0",
             fmt::format("{} -> {}, ops {} / {}", msg.src, msg.dst, msg.send_op, msg.recv_op));
    }
  }

  int neighbour(int n, int axis, int dir) const {
    const auto& ax = t_[axis];
    i64 stride = 1;
    for (int i = 0; i < axis; ++i) stride *= t_[i].extent;
    const int c = static_cast<int>((n / stride) % ax.extent);
    int c2 = c + dir;
    if (c2 < 0 || c2 >= ax.extent) {
      if (!ax.wrap || ax.extent == 1) return -1;
      c2 = (c2 + ax.extent) % ax.extent;
    }
    if (ax.extent == 2 && ((dir > 0 && c != 0) || (dir < 0 && c != 1))) return -1;
    return static_cast<int>(n + (c2 - c) * stride);
  }

  void push(double t, ev k, i64 a, i64 b) { heap_.push({t, seq_++, k, a, b}); }

  int new_packet() {
    if (!free_pkts_.empty()) {
      const int id = free_pkts_.back();
      free_pkts_.pop_back();
      pkts_[static_cast<std::size_t>(id)] = packet{};
      return id;
    }
    pkts_.emplace_back();
    return static_cast<int>(pkts_.size()) - 1;
  }
  int packet_of(int conn, int src, int dst) {
    const int id = new_packet();
    auto& P = pk(id);
    P.conn = conn;
    P.src = src;
    P.dst = dst;
    return id;
  }
  void free_packet(int id) { free_pkts_.push_back(id); }
  packet& pk(int id) { return pkts_[static_cast<std::size_t>(id)]; }
  link_state& lk(i64 id) { return links_[static_cast<std::size_t>(id)]; }
  connection& cn(int id) { return conns_[static_cast<std::size_t>(id)]; }

  // Connections per node pair (tcp): what Open MPI's tcp BTL opens, one per interface of the node.
  int connections() const {
    if (!tcp()) return 1;
    if (p_.connections_per_peer > 0) return p_.connections_per_peer;
    int k = 0;
    for (const auto& ax : t_.axes())
      k += ax.extent <= 1 ? 0 : (ax.extent == 2 ? 1 : 2);  // a mesh's end nodes have one less
    return std::max(1, k);
  }

  // ob1's next connection in turn from src to dst (mca_bml_base_btl_array_get_next, per peer).
  int next_connection(std::unordered_map<i64, int>& turn, int src, int dst) {
    int& k = turn[static_cast<i64>(src) * P_ + dst];
    const int c = k;
    k = (k + 1) % K_;
    return c;
  }
  std::unordered_map<i64, int> eager_turn_, send_turn_;

  int conn_of(int src, int dst, int k = 0) {
    const i64 key = (static_cast<i64>(src) * P_ + dst) * K_ + k;
    auto it = conn_index_.find(key);
    if (it != conn_index_.end()) return it->second;
    connection c;
    c.src = src;
    c.dst = dst;
    c.cwnd = p_.initial_window * p_.mss;
    c.srtt = p_.initial_rtt;
    c.rttvar = p_.initial_rtt / 2;
    c.rto = c.srtt + std::max(p_.min_rto, 4 * c.rttvar);
    conns_.push_back(std::move(c));
    const int id = static_cast<int>(conns_.size()) - 1;
    conn_index_.emplace(key, id);
    return id;
  }

  void dispatch(const event& e) {
    switch (e.kind) {
      case ev::tx_done:
        tx_done(e.a, static_cast<int>(e.b));
        break;
      case ev::arrive:
        arrive(e.a, static_cast<int>(e.b));
        break;
      case ev::credit:
        lk(e.a).credits += static_cast<double>(e.b);
        try_transmit(e.a);
        break;
      case ev::rto:
        on_rto(static_cast<int>(e.a), static_cast<std::uint64_t>(e.b));
        break;
      case ev::pace:
        cn(static_cast<int>(e.a)).pace_armed = false;
        tcp_send(static_cast<int>(e.a));
        break;
      case ev::op_start:
        op_start(static_cast<int>(e.a));
        break;
      case ev::post_send:
        post_send(static_cast<int>(e.a));
        break;
      case ev::ctrl_send: {
        const auto& m = s_.messages[static_cast<std::size_t>(e.a)];
        enqueue_stream(conn_of(m.dst, m.src, next_connection(eager_turn_, m.dst, m.src)),
                       static_cast<i64>(p_.control_bytes), static_cast<int>(e.a), item::control);
        break;
      }
      case ev::tlp:
        on_tlp(static_cast<int>(e.a), static_cast<std::uint64_t>(e.b));
        break;
      case ev::delack:
        if (cn(static_cast<int>(e.a)).delack_gen == static_cast<std::uint64_t>(e.b) &&
            cn(static_cast<int>(e.a)).unacked > 0)
          send_ack(static_cast<int>(e.a), -1);
        break;
      case ev::probe:
        if (cn(static_cast<int>(e.a)).blocked) {
          cn(static_cast<int>(e.a)).blocked = false;
          tcp_send(static_cast<int>(e.a));
        }
        break;
      case ev::app_fill:
        cn(static_cast<int>(e.a)).fill_armed = false;
        app_fill(static_cast<int>(e.a));
        tcp_send(static_cast<int>(e.a));
        break;
      case ev::rest_send:
        rest_send(static_cast<int>(e.a));
        break;
    }
  }

  // ---- operations and messages --------------------------------------------------------------
  void op_start(int o) {
    const auto uo = static_cast<std::size_t>(o);
    if (op_left_[uo] == 0) {
      op_complete(o);
      return;
    }
    int k = 0;
    for (int m : op_sends_[uo]) push(now_ + (++k) * p_.post_overhead, ev::post_send, m, 0);
    // Receives: mark posted; a message whose first part already arrived proceeds now.
    for (int m : recvs_of(o)) {
      auto& ms = msgs_[static_cast<std::size_t>(m)];
      ms.recv_posted = true;
      if (ms.eager_arrived) on_first_part(m);
    }
  }

  const std::vector<int>& recvs_of(int o) {
    if (op_recvs_.empty()) {
      op_recvs_.resize(s_.ops.size());
      for (std::size_t m = 0; m < s_.messages.size(); ++m)
        op_recvs_[static_cast<std::size_t>(s_.messages[m].recv_op)].push_back(static_cast<int>(m));
    }
    return op_recvs_[static_cast<std::size_t>(o)];
  }
  std::vector<std::vector<int>> op_recvs_;

  void post_send(int m) {
    const auto& msg = s_.messages[static_cast<std::size_t>(m)];
    if (msg.src == msg.dst) {  // a local copy: no network
      msgs_[static_cast<std::size_t>(m)].eager_arrived = true;
      on_first_part(m);
      return;
    }
    const bool eager = is_eager(msg.bytes);
    enqueue_stream(conn_of(msg.src, msg.dst, next_connection(eager_turn_, msg.src, msg.dst)),
                   static_cast<i64>(std::max(1.0, eager ? msg.bytes : first_part())), m,
                   eager ? item::eager_all : item::eager_first);
  }

  // The rest of a rendezvous message over up to stripe_connections connections, as
  // mca_pml_ob1_calc_weighted_length with equal weights (the interfaces report the same speed):
  // while more than the eager limit is left, each takes rest / n; the next takes all that is left.
  void rest_send(int m) {
    const auto& msg = s_.messages[static_cast<std::size_t>(m)];
    const auto rest = static_cast<i64>(std::max(1.0, msg.bytes - first_part()));
    const int n = std::clamp(p_.stripe_connections, 1, K_);
    const int k0 = next_connection(send_turn_, msg.src, msg.dst);
    std::vector<i64> parts;
    for (i64 left = rest; left > 0 && static_cast<int>(parts.size()) < n;) {
      const i64 len =
          static_cast<double>(left) > p_.eager_limit && static_cast<int>(parts.size()) < n - 1 ? rest / n : left;
      parts.push_back(len);
      left -= len;
    }
    msgs_[static_cast<std::size_t>(m)].parts_left = static_cast<int>(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i)
      enqueue_stream(conn_of(msg.src, msg.dst, (k0 + static_cast<int>(i)) % K_), parts[i], m, item::rest);
  }

  // The receive side saw the first (or only) part of message m; proceed if the receive is posted.
  void on_first_part(int m) {
    const auto& msg = s_.messages[static_cast<std::size_t>(m)];
    auto& ms = msgs_[static_cast<std::size_t>(m)];
    if (!ms.recv_posted || ms.done) return;
    if (msg.src == msg.dst || is_eager(msg.bytes))
      message_done(m);
    else
      push(run_at(msg.dst, now_ + host_delay()), ev::ctrl_send, m, 0);
  }

  void message_done(int m) {
    auto& ms = msgs_[static_cast<std::size_t>(m)];
    if (ms.done) return;
    ms.done = true;
    const auto& msg = s_.messages[static_cast<std::size_t>(m)];
    r_.payload_bytes += msg.src == msg.dst ? 0 : msg.bytes;
    for (int o : {msg.send_op, msg.recv_op})
      if (--op_left_[static_cast<std::size_t>(o)] == 0) op_complete(o);
  }

  void op_complete(int o) {
    ++ops_done_;
    if (!op_end_.empty()) op_end_[static_cast<std::size_t>(o)] = now_;
    end_ = std::max(end_, now_);
    for (int d : dependents_[static_cast<std::size_t>(o)])
      if (--op_deps_[static_cast<std::size_t>(d)] == 0)
        push(run_at(s_.ops[static_cast<std::size_t>(d)].node, now_ + host_delay()), ev::op_start, d, 0);
  }

  void stream_delivered(int c, i64 upto) {
    auto& cc = cn(c);
    while (!cc.items.empty() && cc.items.front().end <= upto) {
      const stream_item it = cc.items.front();
      cc.items.pop_front();
      auto& ms = msgs_[static_cast<std::size_t>(it.msg)];
      switch (it.kind) {
        case item::eager_all:
        case item::eager_first:
          ms.eager_arrived = true;
          on_first_part(it.msg);
          break;
        case item::control:
          push(run_at(s_.messages[static_cast<std::size_t>(it.msg)].src, now_ + host_delay()), ev::rest_send, it.msg,
               0);
          break;
        case item::rest:
          if (--ms.parts_left <= 0) message_done(it.msg);
          break;
      }
    }
  }

  void enqueue_stream(int c, i64 bytes, int msg, item kind) {
    auto& cc = cn(c);
    // Linux tcp_sendmsg -> tcp_rate_check_app_limited: a write to a socket with nothing unsent and
    // room in cwnd marks what it sends app-limited (such samples neither end STARTUP nor lower the
    // bandwidth filter: a striped rendezvous part of a few bytes says nothing of the path)
    if (tcp() && bbr() && p_.bbr_linux_state && p_.bbr_write_state && cc.snd_nxt >= cc.stream_end &&
        static_cast<double>(cc.pipe) < cc.cwnd)
      cc.bbr.app_limited_until = std::max(cc.delivered + static_cast<double>(cc.pipe), 1.0);
    cc.stream_end += std::max<i64>(bytes, 1);
    cc.items.push_back({cc.stream_end, msg, kind});
    if (tcp()) {
      app_fill(c);
      tcp_send(c);
    } else {
      auto& list = nic_conns_[static_cast<std::size_t>(cc.src)];
      if (std::find(list.begin(), list.end(), c) == list.end()) list.push_back(c);
      nic_fill(cc.src);
    }
  }

  // ---- links --------------------------------------------------------------------------------
  void try_transmit(i64 l) {
    auto& L = lk(l);
    if (L.busy || L.queue.empty()) return;
    const int id = L.queue.front();
    const double w = pk(id).wire;
    if (!tcp()) {
      if (L.credits < w) return;
      L.credits -= w;
    }
    L.queue.pop_front();
    L.queued -= w;
    L.busy = true;
    double dt = w / L.bw;
    L.busy_time += dt;
    if (tcp()) {
      // tbf: a full bucket lets a burst through at the device's own speed (veth), then the rate
      L.tokens = std::min(p_.tbf_burst, L.tokens + (now_ - L.token_time) * L.bw);
      L.token_time = now_;
      if (L.tokens >= w) {
        dt = w / p_.device_rate;
        L.tokens -= w;
      } else {
        dt = (w - L.tokens) / L.bw;
        L.tokens = 0;
        L.token_time = now_ + dt;
      }
    }
    push(now_ + dt, ev::tx_done, l, id);
  }

  void tx_done(i64 l, int id) {
    auto& L = lk(l);
    L.busy = false;
    push(now_ + L.lat, ev::arrive, l, id);
    try_transmit(l);
    if (tcp() && p_.small_queues && !pk(id).ack && pk(id).src == L.from) {
      // the segment left its sender's qdisc: TSQ's tcp_wfree lets a throttled connection go on
      auto& cc = cn(pk(id).conn);
      cc.in_qdisc -= pk(id).wire;
      if (cc.tsq_throttled) {
        cc.tsq_throttled = false;
        tcp_send(pk(id).conn);
      }
    }
    if (tcp()) {
      while (!L.waiting.empty() && L.queued < L.capacity) {
        const int c = L.waiting.front();
        L.waiting.pop_front();
        cn(c).blocked = false;
        tcp_send(c);
        if (cn(c).blocked) break;
      }
    } else {
      route_node(L.from);
    }
  }

  void arrive(i64 l, int id) {
    const int n = lk(l).to;
    if (!tcp()) {
      auto& in = inputs_[static_cast<std::size_t>(l)];
      in.q.push_back(id);
      in.used += pk(id).wire;
      route_node(n);
      return;
    }
    auto& P = pk(id);
    if (P.dst == n) {
      receive(id);
      return;
    }
    const i64 o = packet_next_link(t_, n, P.dst);
    auto& O = lk(o);
    if (O.queued + P.wire > O.capacity) {  // drop-tail
      ++r_.drops;
      free_packet(id);
      return;
    }
    O.queue.push_back(id);
    O.queued += P.wire;
    try_transmit(o);
  }

  // credit mode: move packets from input buffers to output queues (or eject), round-robin, until
  // nothing moves; a blocked head blocks its whole buffer.
  void route_node(int n) {
    if (in_route_) return;  // the NIC refilled the FIFO from inside this loop, which will see it
    in_route_ = true;
    const int nin = 2 * nd_ + 1;
    bool moved = true;
    while (moved) {
      moved = false;
      for (int k = 0; k < nin; ++k) {
        const int j = static_cast<int>((rr_[static_cast<std::size_t>(n)] + static_cast<std::size_t>(k)) % nin);
        const bool inj = j == 2 * nd_;
        // input j: injection FIFO, or the buffer of the link arriving on (axis j/2, from the - side if j odd)
        i64 lin = -1;
        std::size_t bi;
        if (inj) {
          bi = links_.size() + static_cast<std::size_t>(n);
        } else {
          const int axis = j / 2, dir = (j % 2 == 0) ? 1 : -1;  // the link that arrives here travelling dir
          const int from = neighbour(n, axis, -dir);
          if (from < 0) continue;
          lin = static_cast<i64>(from) * 2 * nd_ + 2 * axis + (dir < 0 ? 1 : 0);
          if (lk(lin).to != n) continue;
          bi = static_cast<std::size_t>(lin);
        }
        auto& in = inputs_[bi];
        if (in.q.empty()) continue;
        const int id = in.q.front();
        auto& P = pk(id);
        const double w = P.wire;
        if (P.dst == n) {
          in.q.pop_front();
          in.used -= w;
          receive(id);
        } else {
          const i64 o = packet_next_link(t_, n, P.dst);
          auto& O = lk(o);
          if (O.queued + w > O.capacity) continue;
          in.q.pop_front();
          in.used -= w;
          O.queue.push_back(id);
          O.queued += w;
          try_transmit(o);
        }
        if (lin >= 0)
          push(now_ + lk(lin).lat, ev::credit, lin, static_cast<i64>(w));
        else
          nic_fill(n);
        rr_[static_cast<std::size_t>(n)] = static_cast<std::size_t>(j + 1);
        moved = true;
      }
    }
    in_route_ = false;
  }

  // credit mode: the NIC pulls packets round-robin from the node's connections into its FIFO.
  void nic_fill(int n) {
    auto& in = inputs_[links_.size() + static_cast<std::size_t>(n)];
    auto& list = nic_conns_[static_cast<std::size_t>(n)];
    bool added = false;
    while (!list.empty()) {
      auto& rr = nic_rr_[static_cast<std::size_t>(n)];
      rr %= list.size();
      const int c = list[rr];
      auto& cc = cn(c);
      const i64 len = std::min<i64>(static_cast<i64>(p_.mss), cc.stream_end - cc.credit_next);
      const double w = static_cast<double>(len) + p_.header;
      if (in.used + w > p_.injection_bytes) break;
      const int id = packet_of(c, cc.src, cc.dst);
      auto& P = pk(id);
      P.start = cc.credit_next;
      P.len = static_cast<int>(len);
      P.wire = static_cast<int>(w);
      cc.credit_next += len;
      ++r_.packets;
      in.q.push_back(id);
      in.used += w;
      added = true;
      if (cc.credit_next >= cc.stream_end)
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(rr));
      else
        ++rr;
    }
    if (added) route_node(n);
  }
  bool in_route_ = false;

  // ---- receiving ----------------------------------------------------------------------------
  void receive(int id) {
    const packet P = pk(id);
    free_packet(id);
    if (P.ack) {
      on_ack(P.conn, P.ack_cum, P.sack);
      return;
    }
    auto& cc = cn(P.conn);
    const i64 s = P.start, e = P.start + P.len;
    // in order: extends the stream with no hole before or after it
    const bool in_order = s <= cc.rcv_nxt && e > cc.rcv_nxt && cc.ooo.empty();
    const i64 fresh = in_order ? e - cc.rcv_nxt : 0;
    if (e > cc.rcv_nxt) {
      auto& o = cc.ooo;
      auto it = o.find(s);
      if (it == o.end() || it->second < e) o[s] = e;
      while (!o.empty() && o.begin()->first <= cc.rcv_nxt) {
        cc.rcv_nxt = std::max(cc.rcv_nxt, o.begin()->second);
        o.erase(o.begin());
      }
    }
    if (tcp()) {
      if (!p_.delayed_ack) {
        send_ack(P.conn, s);
      } else {
        // Linux tcp_event_data_recv: the first data, or data after an idle RTO, enters quick-ACK mode
        if (cc.last_rcv == -inf || now_ - cc.last_rcv > cc.rto) cc.quickacks = p_.quickacks;
        cc.last_rcv = now_;
        cc.unacked += fresh;
        if (!in_order || cc.quickacks > 0 || static_cast<double>(cc.unacked) > p_.mss) {
          if (cc.quickacks > 0) --cc.quickacks;
          send_ack(P.conn, s);
        } else if (P.len < static_cast<int>(p_.mss)) {
          // ICSK_ACK_PUSHED: acknowledged once the rank has read it (tcp_cleanup_rbuf)
          push(run_at(cc.dst, now_), ev::delack, P.conn, static_cast<i64>(++cc.delack_gen));
        } else {
          push(now_ + p_.delack_timeout, ev::delack, P.conn, static_cast<i64>(++cc.delack_gen));
        }
      }
    }
    stream_delivered(P.conn, cc.rcv_nxt);
  }

  // An ACK of connection c's stream up to its receiver's rcv_nxt; `sack`: the start of the segment
  // that triggered it (-1: none).
  void send_ack(int c, i64 sack) {
    auto& cc = cn(c);
    cc.unacked = 0;
    ++cc.delack_gen;
    ++r_.acks;
    const int a = packet_of(c, cc.dst, cc.src);
    auto& A = pk(a);
    A.ack = true;
    A.ack_cum = cc.rcv_nxt;
    A.sack = sack;
    A.wire = static_cast<int>(p_.ack_bytes);
    inject_local(a);  // acknowledgements never wait for queue space at their sender
  }

  void inject_local(int id) {
    const auto& P = pk(id);
    const i64 o = packet_next_link(t_, P.src, P.dst);
    auto& O = lk(o);
    O.queue.push_back(id);
    O.queued += P.wire;
    try_transmit(o);
  }

  // ---- host: ranks sharing CPUs --------------------------------------------------------------
  bool is_eager(double bytes) const { return bytes + p_.match_header <= p_.eager_limit; }
  double first_part() const { return p_.eager_limit - p_.match_header; }

  // When node n next holds a CPU, at or after t. Turns are round-robin in fixed groups, which is
  // CFS's steady state for equally runnable tasks (with a seed, in a seeded order).
  double run_at(int n, double t) const {
    if (p_.host_cores <= 0) return t;
    const int groups = (P_ + p_.host_cores - 1) / p_.host_cores;
    if (groups <= 1) return t;
    const int slot = turn_.empty() ? n : turn_[static_cast<std::size_t>(n)];
    const double period = groups * p_.host_slice, off = (slot % groups) * p_.host_slice;
    const double start = off + std::floor((t - off) / period) * period;
    return t < start + p_.host_slice ? std::max(t, start) : start + period;
  }

  // The sending rank tops up the connection's socket buffer, if it runs now; otherwise at its turn.
  void app_fill(int c) {
    if (p_.socket_buffer <= 0) return;
    auto& cc = cn(c);
    const double at = run_at(cc.src, now_);
    if (at <= now_) {
      cc.written = std::min(cc.stream_end, cc.snd_una + static_cast<i64>(p_.socket_buffer));
    } else if (!cc.fill_armed && cc.written < cc.stream_end) {
      cc.fill_armed = true;
      push(at, ev::app_fill, c, 0);
    }
  }

  // ---- TCP sender ---------------------------------------------------------------------------
  void tcp_send(int c) {
    auto& cc = cn(c);
    if (cc.blocked) return;
    const i64 o = packet_next_link(t_, cc.src, cc.dst);
    for (;;) {
      // a lost segment first, else new data
      i64 start = -1;
      int len = 0;
      if (cc.lost_bytes > 0) {
        for (auto& [st, sg] : cc.out)
          if (sg.lost) {
            start = st;
            len = sg.len;
            break;
          }
      }
      const bool resend = start >= 0;
      i64 end = 0;
      if (!resend) {
        end = p_.socket_buffer > 0 ? cc.written : cc.stream_end;
        if (cc.snd_nxt >= end) {
          // Linux tcp_rate_check_app_limited: the window is not the limit, so rate samples until
          // what is in flight now is delivered do not say the path is full
          if (bbr() && p_.bbr_linux_state && static_cast<double>(cc.pipe) < cc.cwnd)
            cc.bbr.app_limited_until = std::max(cc.delivered + static_cast<double>(cc.pipe), 1.0);
          return;
        }
        start = cc.snd_nxt;
        len = static_cast<int>(std::min<i64>(static_cast<i64>(p_.mss), end - cc.snd_nxt));
        if (!bbr() && p_.slow_start_after_idle && cc.pipe == 0 && cc.out.empty() && now_ - cc.last_send > cc.rto)
          cc.cwnd = std::min(cc.cwnd, p_.initial_window * p_.mss);
      }
      if (cc.pipe > 0 && static_cast<double>(cc.pipe + len) > cc.cwnd) return;
      if (bbr() && now_ < cc.next_send) {
        if (!cc.pace_armed) {
          cc.pace_armed = true;
          push(cc.next_send, ev::pace, c, 0);
        }
        return;
      }
      // New data leaves as one TSO/GSO burst of up to bbr_tso_segs_goal segments, within cwnd
      // (tcp_write_xmit's cwnd quota); a retransmission as one segment.
      int segs = 1;
      i64 burst = len;
      if (!resend && bbr() && p_.gso) {
        const int goal = static_cast<int>(bbr_quantization(cc) / 3);
        while (
            segs < goal && cc.snd_nxt + burst < end &&
            static_cast<double>(cc.pipe + burst + std::min<i64>(static_cast<i64>(p_.mss), end - cc.snd_nxt - burst)) <=
                std::max(cc.cwnd, static_cast<double>(len))) {
          burst += std::min<i64>(static_cast<i64>(p_.mss), end - cc.snd_nxt - burst);
          ++segs;
        }
      }
      auto& O = lk(o);
      const double wire = static_cast<double>(burst) + segs * p_.header;
      if (p_.small_queues && cc.out.size() > 1 &&
          cc.in_qdisc > std::max(2 * (wire + p_.skb_overhead), bbr() ? pacing_rate(cc) / 1024 : 0.0)) {
        cc.tsq_throttled = true;
        return;
      }
      // tbf: a burst longer than its max_size (the bucket) is segmented at enqueue and the segments
      // that find the queue full are dropped, yet TCP is told the burst went (tbf_segment returns
      // success when any segment was queued): real losses at the sender's own link. Otherwise the
      // burst is queued whole or refused whole.
      const bool split = segs > 1 && wire > p_.tbf_burst;
      if (!split && O.queued + wire > O.capacity) {
        cc.blocked = true;
        if (!p_.local_drop) {
          O.waiting.push_back(c);
          return;
        }
        // Linux: tbf refuses the segment (NET_XMIT_DROP, counted as a drop); it stays unsent and
        // TCP tries again at the connection's next ACK or, with nothing in flight, when the
        // zero-window probe timer (the RTO) fires.
        ++r_.local_drops;
        if (cc.out.empty()) push(now_ + std::max(cc.rto, p_.min_rto), ev::probe, c, 0);
        return;
      }
      for (int k = 0; k < segs; ++k) {
        const i64 st = resend ? start : cc.snd_nxt;
        const int l = resend ? len : static_cast<int>(std::min<i64>(static_cast<i64>(p_.mss), end - cc.snd_nxt));
        const double w = l + p_.header;
        const bool queued = !split || O.queued + w <= O.capacity;
        send_segment(c, st, l, resend, queued ? o : -1);
        if (!queued) ++r_.drops;
      }
      if (bbr()) cc.next_send = std::max(cc.next_send, now_) + wire / pacing_rate(cc);
      if (!cc.rto_armed) arm_rto(c);
      arm_tlp(c);
    }
  }

  // Records one segment as sent and queues it on first-hop link `o` (-1: lost at the sender's own
  // qdisc, which TCP does not know).
  void send_segment(int c, i64 start, int len, bool resend, i64 o) {
    auto& cc = cn(c);
    std::uint64_t order = ++cc.orders;
    ++r_.packets;
    if (cc.out.empty() && cc.pipe == 0) cc.delivered_time = cc.first_tx = now_;  // an idle restart: rate from here
    if (resend) {
      auto& sg = cc.out.at(start);
      sg.lost = false;
      sg.retransmitted = true;
      sg.order = order;
      sg.sent = now_;
      sg.delivered = cc.delivered;
      sg.delivered_time = cc.delivered_time;
      sg.first_tx = cc.first_tx;
      sg.app_limited = cc.bbr.app_limited_until > 0;
      cc.lost_bytes -= len;
      ++r_.retransmits;
    } else {
      auto& sg = cc.out.emplace(start, segment{len, order, now_, cc.delivered, cc.delivered_time}).first->second;
      sg.first_tx = cc.first_tx;
      sg.app_limited = cc.bbr.app_limited_until > 0;
      cc.snd_nxt += len;
    }
    cc.pipe += len;
    cc.last_send = now_;
    if (o >= 0) queue_data(c, o, start, len, order);
  }

  // A data packet of connection c onto its first-hop link o (tcp).
  void queue_data(int c, i64 o, i64 start, int len, std::uint64_t order) {
    auto& cc = cn(c);
    const double w = len + p_.header;
    cc.in_qdisc += w;
    const int id = packet_of(c, cc.src, cc.dst);
    auto& P = pk(id);
    P.start = start;
    P.len = len;
    P.wire = static_cast<int>(w);
    P.order = order;
    auto& O = lk(o);
    O.queue.push_back(id);
    O.queued += w;
    try_transmit(o);
  }

  bool bbr() const { return p_.congestion == packet_params::congestion_control::bbr; }

  static constexpr double bbr_high_gain = 2.885;
  static constexpr double bbr_cycle[8] = {1.25, 0.75, 1, 1, 1, 1, 1, 1};

  static double bbr_filter_max(const connection& cc) {
    double b = 0;
    for (const auto& [round, v] : cc.bbr.bw) b = std::max(b, v);
    return b;
  }
  double bbr_bw(const connection& cc) const {
    const double b = bbr_filter_max(cc);
    // before any sample: the initial window over the initial RTT, as Linux
    return b > 0 ? b : p_.initial_window * p_.mss / p_.initial_rtt;
  }
  double pacing_gain(const connection& cc) const {
    switch (cc.bbr.m) {
      case bbr_state::mode::startup:
        return bbr_high_gain;
      case bbr_state::mode::drain:
        return 1 / bbr_high_gain;
      case bbr_state::mode::probe_bw:
        return bbr_cycle[cc.bbr.cycle];
    }
    return 1;
  }
  // Linux tcp_bbr.c bbr_set_pacing_rate: until STARTUP has found the bandwidth the pacing rate only
  // rises from its initial high_gain x IW / 1 ms, so a flow whose first samples were a few bytes
  // (a rendezvous part striped over idle connections) does not crawl at their rate next time.
  double pacing_rate(connection& cc) const {
    const double rate = pacing_gain(cc) * bbr_bw(cc);
    if (!p_.bbr_linux_state || !p_.bbr_write_state) return rate;
    auto& b = cc.bbr;
    if (b.pacing <= 0) b.pacing = bbr_high_gain * p_.initial_window * p_.mss / p_.initial_rtt;
    if (b.m != bbr_state::mode::startup || rate > b.pacing) b.pacing = rate;
    return b.pacing;
  }

  void delivered_sample(connection& cc, const segment& sg) {
    cc.delivered += sg.len;
    cc.delivered_time = now_;
    cc.first_tx = sg.sent;
    if (!bbr()) return;
    auto& b = cc.bbr;
    const bool linux_state = p_.bbr_linux_state;
    if (linux_state && b.app_limited_until > 0 && cc.delivered > b.app_limited_until) b.app_limited_until = 0;
    const bool app_limited = linux_state && sg.app_limited;
    if (!sg.retransmitted) b.min_rtt = std::min(b.min_rtt, now_ - sg.sent);
    if (sg.delivered >= b.next_round_delivered) {  // a round trip ended
      b.next_round_delivered = cc.delivered;
      ++b.round;
      b.conserving = false;
      // Linux bbr_check_full_bw_reached skips app-limited samples: a flow whose messages end before
      // it fills the path never leaves STARTUP
      if (b.m == bbr_state::mode::startup && !app_limited) {
        const double bw = bbr_bw(cc);
        if (bw >= 1.25 * b.full_bw) {
          b.full_bw = bw;
          b.full_bw_count = 0;
        } else if (++b.full_bw_count >= 3) {
          b.m = bbr_state::mode::drain;
        }
      }
      while (!b.bw.empty() && b.bw.front().first + 10 <= b.round) b.bw.pop_front();
    }
    // Linux tcp_rate_gen: the longer of the send and the ACK intervals, and none shorter than the
    // minimum RTT; an app-limited sample enters the filter only if it raises it
    double interval = now_ - sg.delivered_time;
    if (linux_state) {
      interval = std::max(interval, sg.sent - sg.first_tx);
      if (interval < b.min_rtt) interval = 0;
    }
    const double rate = interval > 0 ? (cc.delivered - sg.delivered) / interval : 0;
    if (interval > 0 && (!app_limited || rate >= bbr_filter_max(cc))) {
      if (b.bw.empty() || b.bw.back().first != b.round)
        b.bw.emplace_back(b.round, rate);
      else
        b.bw.back().second = std::max(b.bw.back().second, rate);
    }
    const double bdp = bbr_bw(cc) * (std::isfinite(b.min_rtt) ? b.min_rtt : p_.initial_rtt);
    if (b.m == bbr_state::mode::drain && static_cast<double>(cc.pipe) <= bdp) {
      b.m = bbr_state::mode::probe_bw;
      b.cycle = static_cast<int>(cc.src + cc.dst) % 8 == 1 ? 2 : static_cast<int>(cc.src + cc.dst) % 8;
      b.cycle_start = now_;
    }
    if (b.m == bbr_state::mode::probe_bw && std::isfinite(b.min_rtt) && now_ - b.cycle_start > b.min_rtt) {
      b.cycle = (b.cycle + 1) % 8;
      b.cycle_start = now_;
    }
  }

  // Linux tcp_bbr.c bbr_quantization_budget: 3 TSO bursts of bbr_tso_segs_goal segments, the
  // bytes of 2^-10 s at the pacing rate (sk_pacing_shift) within 2 and a 64 KiB GSO packet. A
  // bandwidth estimate from segments that crossed tbf's bucket at the device's speed puts the pacing
  // rate at Gbit/s, so the budget alone is 3 x 45 = 135 packets per flow: the testbed's cwnd p75.
  double bbr_quantization(connection& cc) const {
    if (!p_.bbr_tso_autosize) return p_.bbr_quantization;
    const double rate = pacing_rate(cc);
    const double min_segs = rate < 1.2e6 / 8 ? 1 : 2;  // bbr_min_tso_rate
    const double gso_segs = std::floor((65536.0 - 1 - 320) / p_.mss);
    const double segs = std::min(std::max(std::floor(std::min(rate / 1024, 65536.0 - 1 - 320) / p_.mss), min_segs),
                                 std::min(gso_segs, 127.0));
    return 3 * segs;
  }

  // Linux tcp_bbr.c bbr_set_cwnd: cwnd moves toward the target by the bytes acknowledged; in
  // STARTUP it only grows (an app-limited flow never leaves STARTUP, so a window that once grew
  // large stays large, over idle periods too: what `ss` shows on the testbed).
  void bbr_update_cwnd(connection& cc, double acked) {
    const auto& b = cc.bbr;
    if (b.rto_clamp) {
      cc.cwnd = p_.mss;
      return;
    }
    const double gain = b.m == bbr_state::mode::probe_bw ? 2.0 : bbr_high_gain;
    const double bdp = bbr_bw(cc) * (std::isfinite(b.min_rtt) ? b.min_rtt : p_.initial_rtt);
    const double probe = b.m == bbr_state::mode::probe_bw && b.cycle == 0 ? 2 : 0;
    const double target = std::max(4 * p_.mss, gain * bdp + (bbr_quantization(cc) + probe) * p_.mss);
    if (!p_.bbr_linux_cwnd)
      cc.cwnd = target;
    else if (b.m != bbr_state::mode::startup)
      cc.cwnd = std::min(cc.cwnd + acked, target);
    else if (cc.cwnd < target || cc.delivered < p_.initial_window * p_.mss)
      cc.cwnd += acked;
    cc.cwnd = std::max(cc.cwnd, 4 * p_.mss);
  }

  // Linux tcp_bbr.c bbr_set_cwnd_to_recover_or_restore: losses come off cwnd; entering recovery
  // keeps one round of packet conservation (cwnd = in flight + acked) after saving cwnd; leaving
  // recovery or the loss state after a timeout puts the saved cwnd back at once. With a window
  // that STARTUP only grew, the restore re-sends the burst whose losses started the recovery.
  void bbr_linux_cwnd_on_ack(connection& cc, double acked, double lost_now, bool newly_lost, bool recovery_ended,
                             bool advanced) {
    auto& b = cc.bbr;
    if (lost_now > 0) cc.cwnd = std::max(cc.cwnd - lost_now, p_.mss);
    if (newly_lost && !cc.recovery) {
      b.prior_cwnd = cc.cwnd + lost_now;
      cc.recovery = true;
      cc.recover = cc.snd_nxt;
      b.conserving = true;
      b.next_round_delivered = cc.delivered;
      cc.cwnd = static_cast<double>(cc.pipe) + acked;
    } else if (recovery_ended) {
      cc.cwnd = std::max(cc.cwnd, b.prior_cwnd);
      b.conserving = false;
    }
    if (advanced) b.rto_clamp = false;
    if (b.conserving) {
      cc.cwnd = std::max(cc.cwnd, static_cast<double>(cc.pipe) + acked);
      return;
    }
    if (!b.rto_clamp)
      bbr_update_cwnd(cc, acked);
    else
      cc.cwnd = std::max(cc.cwnd, p_.mss);
  }

  void arm_rto(int c) {
    auto& cc = cn(c);
    cc.rto_armed = true;
    push(now_ + cc.rto, ev::rto, c, static_cast<i64>(++cc.rto_gen));
  }

  void on_ack(int c, i64 cum, i64 sack) {
    auto& cc = cn(c);
    if (p_.local_drop) cc.blocked = false;
    i64 acked = 0;
    std::uint64_t sack_order = 0;
    if (auto it = cc.out.find(sack); it != cc.out.end() && !it->second.sacked) {
      auto& sg = it->second;
      if (!sg.lost)
        cc.pipe -= sg.len;
      else
        cc.lost_bytes -= sg.len;
      sg.lost = false;
      sg.sacked = true;
      acked += sg.len;
      sack_order = sg.order;
      if (!sg.retransmitted) rtt_sample(cc, now_ - sg.sent);
      delivered_sample(cc, sg);
    }
    bool advanced = false;
    while (!cc.out.empty() && cc.out.begin()->first + cc.out.begin()->second.len <= cum) {
      auto& sg = cc.out.begin()->second;
      if (!sg.sacked) {
        acked += sg.len;
        if (sg.lost)
          cc.lost_bytes -= sg.len;
        else
          cc.pipe -= sg.len;
        delivered_sample(cc, sg);
      }
      cc.out.erase(cc.out.begin());
      advanced = true;
    }
    if (cum > cc.snd_una) {
      cc.snd_una = cum;
      app_fill(c);
    }
    // loss detection: a segment sent 3 transmissions before one now acknowledged is lost
    bool newly_lost = false;
    double lost_now = 0;
    if (sack_order > 3)
      for (auto& [st, sg] : cc.out)
        if (!sg.sacked && !sg.lost && sg.order + 3 <= sack_order) {
          sg.lost = true;
          cc.pipe -= sg.len;
          cc.lost_bytes += sg.len;
          lost_now += sg.len;
          newly_lost = true;
        }
    bool recovery_ended = false;
    if (cc.recovery && cc.snd_una >= cc.recover) {
      cc.recovery = false;
      recovery_ended = true;
    }
    if (bbr() && p_.bbr_linux_state) {
      bbr_linux_cwnd_on_ack(cc, static_cast<double>(acked), lost_now, newly_lost, recovery_ended, advanced);
    } else if (bbr()) {
      if (newly_lost && !cc.recovery) {
        cc.recovery = true;
        cc.recover = cc.snd_nxt;
      }
      if (advanced) cc.bbr.rto_clamp = false;
      bbr_update_cwnd(cc, static_cast<double>(acked));
    } else if (newly_lost && !cc.recovery) {
      cc.recovery = true;
      cc.recover = cc.snd_nxt;
      cc.ssthresh = std::max(cc.cwnd / 2, 2 * p_.mss);
      cc.cwnd = cc.ssthresh;
    } else if (!cc.recovery && acked > 0) {
      if (cc.cwnd < cc.ssthresh)
        cc.cwnd += static_cast<double>(acked);
      else
        cc.cwnd += p_.mss * static_cast<double>(acked) / cc.cwnd;
    }
    if (advanced) {
      cc.rto = cc.srtt + std::max(p_.min_rto, 4 * cc.rttvar);
      if (cc.out.empty()) {
        cc.rto_armed = false;
        ++cc.rto_gen;
      } else {
        arm_rto(c);
      }
    }
    tcp_send(c);
    arm_tlp(c);
  }

  // Linux tcp_schedule_loss_probe (RFC 8985 TLP): with data in flight and no recovery under way, a
  // probe after 2 x srtt (+ 2 jiffies; + the minimum RTO when one segment is out) re-sends the last
  // segment, so that a lost tail is found by SACK instead of by the retransmission timeout.
  void arm_tlp(int c) {
    auto& cc = cn(c);
    if (!p_.tail_loss_probe || cc.out.empty() || cc.recovery || cc.lost_bytes > 0) return;
    const double pto = 2 * cc.srtt + (cc.out.size() == 1 ? p_.min_rto : p_.tlp_min);
    push(now_ + pto, ev::tlp, c, static_cast<i64>(++cc.tlp_gen));
  }

  void on_tlp(int c, std::uint64_t gen) {
    auto& cc = cn(c);
    if (gen != cc.tlp_gen || cc.out.empty() || cc.recovery || cc.lost_bytes > 0) return;
    auto it = cc.out.end();
    do --it;
    while (it != cc.out.begin() && (it->second.sacked || it->second.lost));
    auto& sg = it->second;
    if (sg.sacked || sg.lost) return;
    const i64 o = packet_next_link(t_, cc.src, cc.dst);
    auto& O = lk(o);
    const double w = sg.len + p_.header;
    if (O.queued + w > O.capacity) {
      ++r_.local_drops;
      return;
    }
    sg.order = ++cc.orders;
    sg.sent = now_;
    sg.retransmitted = true;
    ++r_.packets;
    ++r_.retransmits;
    queue_data(c, o, it->first, sg.len, sg.order);
  }

  void rtt_sample(connection& cc, double r) {
    cc.rttvar = 0.75 * cc.rttvar + 0.25 * std::abs(cc.srtt - r);
    cc.srtt = 0.875 * cc.srtt + 0.125 * r;
  }

  void on_rto(int c, std::uint64_t gen) {
    auto& cc = cn(c);
    if (!cc.rto_armed || gen != cc.rto_gen) return;
    cc.rto_armed = false;
    if (cc.out.empty()) return;
    ++r_.timeouts;
    if (p_.local_drop) cc.blocked = false;  // the retransmission tries the first hop again
    cc.ssthresh = std::max(static_cast<double>(cc.pipe + cc.lost_bytes) / 2, 2 * p_.mss);
    // Linux bbr_save_cwnd (through ssthresh on entering the loss state)
    cc.bbr.prior_cwnd = cc.recovery ? std::max(cc.bbr.prior_cwnd, cc.cwnd) : cc.cwnd;
    cc.cwnd = p_.mss;
    cc.bbr.rto_clamp = true;
    for (auto& [st, sg] : cc.out)
      if (!sg.sacked && !sg.lost) {
        sg.lost = true;
        cc.pipe -= sg.len;
        cc.lost_bytes += sg.len;
      }
    // slow start from one packet, as Linux's Loss state; with BBR's Linux state the loss state
    // lasts until what was sent before the timeout is acknowledged, then cwnd is restored
    cc.recovery = bbr() && p_.bbr_linux_state;
    cc.recover = cc.snd_nxt;
    cc.bbr.conserving = false;
    cc.rto = std::min(2 * cc.rto, 60.0);
    arm_rto(c);
    tcp_send(c);
  }
};

}  // namespace

std::vector<packet_result> simulate_packets_seeded(const torus& t, const packet_schedule& s, packet_params p,
                                                   int seeds) {
  expect(seeds >= 1, "simulate_packets seeds", ">= 1", std::to_string(seeds));
  if (seeds == 1) return {simulate_packets(t, s, p)};
  std::vector<packet_result> all;
  const std::uint64_t base = p.seed;
  for (int k = 0; k < seeds; ++k) {
    p.seed = base * 1000 + static_cast<std::uint64_t>(k) + 1;
    all.push_back(simulate_packets(t, s, p));
  }
  return all;
}

packet_result simulate_packets_median(const torus& t, const packet_schedule& s, const packet_params& p, int seeds,
                                      std::vector<packet_result>* runs) {
  auto all = simulate_packets_seeded(t, s, p, seeds);
  std::vector<std::size_t> order(all.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[a].seconds < all[b].seconds; });
  packet_result med = all[order[order.size() / 2]];
  if (order.size() % 2 == 0) med.seconds = (all[order[order.size() / 2 - 1]].seconds + med.seconds) / 2;
  if (runs) *runs = std::move(all);
  return med;
}

double timed_median_seconds(const std::vector<packet_result>& runs, int timed) {
  expect(!runs.empty(), "timed_median_seconds runs", "at least one run", "none");
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  std::vector<double> per_run;
  for (const auto& r : runs) {
    const auto n = static_cast<int>(r.repetition_seconds.size());
    expect(timed >= 1 && timed <= std::max(n, 1), "timed_median_seconds timed",
           fmt::format(">= 1 and <= the {} repetitions of a run", n), std::to_string(timed));
    per_run.push_back(timed > 1 ? median({r.repetition_seconds.end() - timed, r.repetition_seconds.end()}) : r.seconds);
  }
  return median(per_run);
}

packet_result simulate_packets(const torus& t, const packet_schedule& s, const packet_params& p) {
  expect(p.repetitions >= 1, "packet_params::repetitions", ">= 1", std::to_string(p.repetitions));
  if (p.repetitions == 1) {
    engine e(t, s, p);
    auto r = e.run();
    r.first_seconds = r.seconds;
    r.repetition_seconds = {r.seconds};
    return r;
  }
  packet_params one = p;
  one.repetitions = 1;
  return simulate_packet_calls(t, std::vector<packet_schedule>(static_cast<std::size_t>(p.repetitions), s), one);
}

packet_result simulate_packet_calls(const torus& t, const std::vector<packet_schedule>& calls, const packet_params& p) {
  expect(!calls.empty(), "simulate_packet_calls calls", "at least one schedule", "none");
  expect(p.repetitions == 1, "packet_params::repetitions with simulate_packet_calls", "1 (the calls are the sequence)",
         std::to_string(p.repetitions));
  // Call k's ops follow a barrier op (on node 0, no messages) that follows every op of call k-1;
  // the connections and links are the same, so their state carries over.
  packet_schedule all;
  std::vector<int> barriers;
  for (const auto& s : calls) {
    const int base = static_cast<int>(all.ops.size());
    for (const auto& op : s.ops) {
      std::vector<int> after;
      for (int a : op.after) after.push_back(base + a);
      if (after.empty() && !barriers.empty()) after.push_back(barriers.back());
      all.add_op(op.node, std::move(after), op.label);
    }
    for (const auto& m : s.messages) all.add_message(m.src, m.dst, m.bytes, base + m.send_op, base + m.recv_op);
    std::vector<int> every(s.ops.size());
    std::iota(every.begin(), every.end(), base);
    // a call with no ops still takes its place in the sequence: the barrier follows the last one
    if (every.empty() && !barriers.empty()) every.push_back(barriers.back());
    barriers.push_back(all.add_op(0, std::move(every), "barrier"));
  }
  engine e(t, all, p);
  e.op_end_.assign(all.ops.size(), 0);
  auto r = e.run();
  double prev = 0;
  for (int b : barriers) {
    const double end_b = e.op_end_[static_cast<std::size_t>(b)];
    r.repetition_seconds.push_back(end_b - prev);
    prev = end_b;
  }
  r.first_seconds = r.repetition_seconds.front();
  r.seconds = r.repetition_seconds.back();
  return r;
}

}  // namespace toru::topology
