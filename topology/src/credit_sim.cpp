// SPDX-License-Identifier: BSD-3-Clause
// The credit (HPC) packet engine: see credit_sim.hpp for the model.
#include "toru/topology/credit_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include "toru/core/error.hpp"

namespace toru::topology {

namespace {

using i64 = std::int64_t;

struct packet {
  int msg = 0;
  i64 dst = 0;
  double wire = 0, payload = 0;
  double head = 0, tail = 0;  // arrival of head and tail at the router holding it
  int in_axis = -1;           // axis of the link it arrived on (-1: injected)
  int in_dir = 0;
  i64 in_link = -1;
  int in_vc = 0;
  double born = 0;  // when the host queued it (age-based arbitration)
};

struct link_state {
  bool exists = false;
  double busy_until = 0, busy = 0, bw = 1, lat = 0;
  i64 to = 0;
};

enum class ev : std::uint8_t { try_node, credit, fifo_free, deliver, op_start };

struct event {
  double t;
  std::uint64_t seq;
  ev type;
  i64 a;
  double b;
  bool operator>(const event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct message_state {
  double unsent = 0, undelivered = 0;
};

struct op_state {
  int deps = 0, outstanding = 0;
  bool started = false, done = false;
  double ready = 0;
  std::vector<int> sends, dependents;
};

class engine {
 public:
  engine(const torus& t, const packet_schedule& s, const credit_params& p) : t_(t), s_(s), p_(p) {
    nd_ = t.ndims();
    P_ = t.size();
    V_ = p.vcs;
    nlin_ = 2 * nd_ * V_;
    K_ = p.injection_fifos > 0 ? p.injection_fifos : 2 * nd_;
    nin_ = nlin_ + K_;
    links_.resize(static_cast<std::size_t>(P_ * 2 * nd_));
    std::vector<int> c(static_cast<std::size_t>(nd_));
    for (i64 n = 0; n < P_; ++n) {
      t.coords_into(n, c);
      for (int a = 0; a < nd_; ++a)
        for (int d : {1, -1}) {
          const auto& ax = t[a];
          auto& L = links_[static_cast<std::size_t>(index(n, a, d))];
          const int D = ax.extent;
          const int ca = c[static_cast<std::size_t>(a)];
          if (D == 1 || (D == 2 && ax.wrap && d < 0 && ca == 0) || (D == 2 && ax.wrap && d > 0 && ca == 1)) continue;
          if (!ax.wrap && (ca + d < 0 || ca + d >= D)) continue;
          auto cc = c;
          cc[static_cast<std::size_t>(a)] = ((ca + d) % D + D) % D;
          L.exists = true;
          L.to = t.node_unchecked(cc);
          L.bw = ax.bandwidth;
          L.lat = ax.latency;
        }
    }
    credits_.assign(links_.size() * static_cast<std::size_t>(V_), p.input_bytes);
    fifos_.resize(static_cast<std::size_t>(P_ * nin_));
    fifo_room_.assign(static_cast<std::size_t>(P_ * K_), p.injection_bytes);
    rr_.assign(static_cast<std::size_t>(P_), 0);
    sub_rr_.assign(static_cast<std::size_t>(P_ * (2 * nd_ + 1)), 0);
    nic_.resize(static_cast<std::size_t>(P_));
    for (auto& n : nic_) {
      n.fifo_msgs.resize(static_cast<std::size_t>(K_));
      n.next.assign(static_cast<std::size_t>(K_), 0);
    }
  }

  credit_result run() {
    const auto nops = s_.ops.size();
    ops_.resize(nops);
    r_.op_finish.assign(nops, 0);
    msgs_.resize(s_.messages.size());
    for (std::size_t i = 0; i < nops; ++i) {
      const auto& o = s_.ops[i];
      expect(o.node >= 0 && o.node < P_, fmt::format("packet_schedule op {} node", i), fmt::format("in [0, {})", P_),
             std::to_string(o.node));
      for (int d : o.after) {
        expect(d >= 0 && static_cast<std::size_t>(d) < i, fmt::format("packet_schedule op {} after", i),
               "an earlier op", std::to_string(d));
        ops_[static_cast<std::size_t>(d)].dependents.push_back(static_cast<int>(i));
      }
      ops_[i].deps = static_cast<int>(o.after.size());
    }
    for (std::size_t i = 0; i < s_.messages.size(); ++i) {
      const auto& m = s_.messages[i];
      const auto ok = [&](int op, int node) {
        return op >= 0 && static_cast<std::size_t>(op) < nops && s_.ops[static_cast<std::size_t>(op)].node == node;
      };
      expect(ok(m.send_op, m.src) && ok(m.recv_op, m.dst), fmt::format("packet_schedule message {}", i),
             "send and receive ops on its source and destination nodes",
             fmt::format("{} -> {} with ops {} / {}", m.src, m.dst, m.send_op, m.recv_op));
      expect(m.bytes >= 0, fmt::format("packet_schedule message {} bytes", i), ">= 0", fmt::format("{}", m.bytes));
      msgs_[i] = {m.bytes, m.bytes};
      ops_[static_cast<std::size_t>(m.send_op)].sends.push_back(static_cast<int>(i));
      ++ops_[static_cast<std::size_t>(m.send_op)].outstanding;
      ++ops_[static_cast<std::size_t>(m.recv_op)].outstanding;
    }
    for (std::size_t i = 0; i < nops; ++i)
      if (ops_[i].deps == 0) push(p_.host_delay, ev::op_start, static_cast<i64>(i), 0);
    while (!q_.empty()) {
      const event e = q_.top();
      q_.pop();
      now_ = e.t;
      ++r_.events;
      if (now_ > p_.time_limit)
        throw error(
            errc::invalid_argument,
            fmt::format("simulate_credit: past time_limit {} s (a schedule that cannot finish)", p_.time_limit));
      switch (e.type) {
        case ev::try_node:
          serve(e.a);
          break;
        case ev::credit:
          credits_[static_cast<std::size_t>(e.a)] += e.b;
          serve(e.a / V_ / (2 * nd_));
          break;
        case ev::fifo_free: {
          const i64 node = e.a / K_;
          fifo_room_[static_cast<std::size_t>(e.a)] += e.b;
          refill(node);
          serve(node);
          break;
        }
        case ev::deliver:
          deliver(static_cast<int>(e.a), e.b);
          break;
        case ev::op_start:
          start_op(static_cast<int>(e.a));
          break;
      }
    }
    for (std::size_t i = 0; i < nops; ++i)
      if (!ops_[i].done)
        throw error(errc::invalid_argument,
                    fmt::format("simulate_credit: op {} (node {}, '{}') never completed: the network deadlocked ({} "
                                "routing) or the schedule waits on itself",
                                i, s_.ops[i].node, s_.ops[i].label, to_string(p_.route)));
    r_.seconds = end_;
    r_.axis_utilisation.assign(static_cast<std::size_t>(nd_), 0);
    std::vector<double> count(static_cast<std::size_t>(nd_), 0);
    for (std::size_t l = 0; l < links_.size(); ++l) {
      if (!links_[l].exists) continue;
      const double u = end_ > 0 ? links_[l].busy / end_ : 0;
      const auto a = (l % static_cast<std::size_t>(2 * nd_)) / 2;
      r_.axis_utilisation[a] += u;
      count[a] += 1;
      r_.max_link_utilisation = std::max(r_.max_link_utilisation, u);
    }
    for (std::size_t a = 0; a < count.size(); ++a)
      if (count[a] > 0) r_.axis_utilisation[a] /= count[a];
    return r_;
  }

 private:
  i64 index(i64 node, int axis, int dir) const { return node * 2 * nd_ + 2 * axis + (dir < 0 ? 1 : 0); }
  std::deque<int>& fifo(i64 node, int input) { return fifos_[static_cast<std::size_t>(node * nin_ + input)]; }

  void push(double t, ev type, i64 a, double b) { q_.push({t, seq_++, type, a, b}); }

  // The productive direction along axis a from coordinate ca to cb (0: none).
  int direction(int a, int ca, int cb) const {
    if (ca == cb) return 0;
    const auto& ax = t_[a];
    const int D = ax.extent;
    if (!ax.wrap) return cb > ca ? 1 : -1;
    if (D == 2) return ca == 0 ? 1 : -1;
    const int delta = ((cb - ca) % D + D) % D;
    if (2 * delta == D) return ca % 2 == 0 ? 1 : -1;
    return 2 * delta < D ? 1 : -1;
  }

  double& credit(i64 link, int vc) { return credits_[static_cast<std::size_t>(link * V_ + vc)]; }

  // Bubble rule: entering a ring of buffers (from injection, another axis or another VC) needs a
  // spare largest packet behind the packet; continuing along it needs room for the packet.
  double bubble_need(const packet& k, int axis, int dir, int vc) const {
    const bool same_ring = k.in_axis == axis && k.in_dir == dir && k.in_vc == vc;
    return same_ring ? k.wire : k.wire + p_.packet_bytes;
  }

  struct hop {
    i64 link = -1;
    int vc = 0;
  };

  // The output link and downstream VC packet k takes now (link -1: it must wait).
  // dimension_order: the dimension-order link, the VC with most room that passes the bubble rule.
  // adaptive (BG/L, Duato): VCs 1.. on any productive idle link with room for the packet, the most
  // room first; else VC 0, the escape channel, on the dimension-order link with the bubble rule.
  hop choose(i64 node, const packet& k) {
    i64 a = node, b = k.dst;
    hop best, escape;
    double best_room = -1;
    bool first = true;
    for (int i = 0; i < nd_; ++i) {
      const auto D = static_cast<i64>(t_[i].extent);
      const int dir = direction(i, static_cast<int>(a % D), static_cast<int>(b % D));
      a /= D;
      b /= D;
      if (dir == 0) continue;
      const i64 l = index(node, i, dir);
      const bool dor = first;
      first = false;
      if (links_[static_cast<std::size_t>(l)].busy_until > now_) {
        if (p_.route == credit_params::routing::dimension_order) return {};
        continue;
      }
      if (p_.route == credit_params::routing::dimension_order) {
        for (int vc = 0; vc < V_; ++vc) {
          const double room = credit(l, vc);
          if (room >= bubble_need(k, i, dir, vc) && room > best_room) {
            best = {l, vc};
            best_room = room;
          }
        }
        return best;
      }
      for (int vc = 1; vc < V_; ++vc) {
        const double room = credit(l, vc);
        if (room >= k.wire && room > best_room) {
          best = {l, vc};
          best_room = room;
        }
      }
      if (dor && credit(l, 0) >= bubble_need(k, i, dir, 0)) escape = {l, 0};
    }
    return best.link >= 0 ? best : escape;
  }

  // Inputs are served round-robin by port: each link's input port (the next of its VC FIFOs in
  // turn whose head can move), then the injection FIFOs as one more port, so that transit from each
  // direction and the node's own traffic share an output equally, however many FIFOs each has.
  void serve(i64 node) {
    if (p_.arbitrate != credit_params::arbitration::round_robin) {
      serve_ranked(node);
      return;
    }
    const int slots = 2 * nd_ + 1;
    int& rr = rr_[static_cast<std::size_t>(node)];
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < slots && !moved; ++j) {
        const int slot = (rr + j) % slots;
        const int first = slot * V_, width = slot < 2 * nd_ ? V_ : K_;
        int& sub = sub_rr_[static_cast<std::size_t>(node * slots + slot)];
        for (int f = 0; f < width && !moved; ++f)
          if (advance(node, first + (sub + f) % width)) {
            sub = (sub + f + 1) % width;
            moved = true;
          }
        if (moved) rr = (slot + 1) % slots;  // the granted port goes last next time
      }
    }
  }

  // Ranked arbitration. Age-based (Tofu, Gemini, Aries): the oldest head that can move goes first,
  // which keeps a ring's far sources from starving behind its near ones (the parking-lot effect).
  // Longest queue: the head of the fullest input FIFO (in packets) goes first, ties by input order: a
  // candidate for BG/L's dynamic-VC priority that its papers' text here could not confirm.
  void serve_ranked(i64 node) {
    const bool by_length = p_.arbitrate == credit_params::arbitration::longest_queue;
    std::vector<std::pair<double, int>>& heads = heads_;
    for (bool moved = true; moved;) {
      moved = false;
      heads.clear();
      for (int input = 0; input < nin_; ++input) {
        const auto& f = fifo(node, input);
        if (f.empty()) continue;
        const auto& k = pk_[static_cast<std::size_t>(f.front())];
        if (k.head <= now_)
          heads.emplace_back(by_length ? (input < nlin_ ? -static_cast<double>(f.size()) : 0.0) : k.born, input);
      }
      std::sort(heads.begin(), heads.end());
      for (const auto& h : heads)
        if (advance(node, h.second)) {
          moved = true;
          break;
        }
    }
  }

  // Moves the head packet of one input if it can go now; true if it moved.
  bool advance(i64 node, int input) {
    auto& f = fifo(node, input);
    if (f.empty()) return false;
    const int id = f.front();
    auto& k = pk_[static_cast<std::size_t>(id)];
    if (k.head > now_) return false;
    if (k.dst == node) {
      f.pop_front();
      release(node, input, k, k.tail);
      push(k.tail, ev::deliver, k.msg, k.payload);
      free_.push_back(id);
      return true;
    }
    const auto [l, vc] = choose(node, k);
    if (l < 0) return false;
    auto& L = links_[static_cast<std::size_t>(l)];
    f.pop_front();
    const double end = std::max(now_ + k.wire / L.bw, k.tail);
    L.busy += end - now_;
    L.busy_until = end;
    credit(l, vc) -= k.wire;
    release(node, input, k, end);
    const int axis = static_cast<int>(l % (2 * nd_)) / 2;
    k.in_axis = axis;
    k.in_dir = l % 2 == 0 ? 1 : -1;
    k.in_link = l;
    k.in_vc = vc;
    k.head = now_ + L.lat;
    k.tail = end + L.lat;
    fifo(L.to, (2 * axis + static_cast<int>(l % 2)) * V_ + vc).push_back(id);
    push(k.head, ev::try_node, L.to, 0);
    push(end, ev::try_node, node, 0);
    return true;
  }

  // The buffer space packet k held at `node` frees at time `when`.
  void release(i64 node, int input, const packet& k, double when) {
    if (input < nlin_) {
      const auto& up = links_[static_cast<std::size_t>(k.in_link)];
      push(when + up.lat, ev::credit, k.in_link * V_ + k.in_vc, k.wire);
    } else {
      push(when, ev::fifo_free, node * K_ + (input - nlin_), k.wire);
    }
  }

  // The host cuts packets from the node's posted messages into its injection FIFOs: each FIFO
  // round-robin over its messages (interleaved) or one message after another (in_order).
  void refill(i64 node) {
    auto& nic = nic_[static_cast<std::size_t>(node)];
    const double payload_max = p_.packet_bytes - p_.header_bytes;
    for (int f = 0; f < K_; ++f) {
      auto& q = nic.fifo_msgs[static_cast<std::size_t>(f)];
      double& room = fifo_room_[static_cast<std::size_t>(node * K_ + f)];
      auto& next = nic.next[static_cast<std::size_t>(f)];
      while (!q.empty() && room >= p_.packet_bytes) {
        if (p_.inject == credit_params::injection::in_order) next = 0;
        next %= q.size();
        const int msg = q[next];
        auto& m = msgs_[static_cast<std::size_t>(msg)];
        const double payload = std::min(payload_max, m.unsent);
        m.unsent -= payload;
        if (m.unsent <= 0)
          q.erase(q.begin() + static_cast<std::ptrdiff_t>(next));
        else
          ++next;
        int id;
        if (!free_.empty()) {
          id = free_.back();
          free_.pop_back();
        } else {
          id = static_cast<int>(pk_.size());
          pk_.emplace_back();
        }
        auto& k = pk_[static_cast<std::size_t>(id)];
        k = {};
        k.msg = msg;
        k.dst = s_.messages[static_cast<std::size_t>(msg)].dst;
        k.payload = payload;
        k.wire = payload + p_.header_bytes;
        k.head = k.tail = k.born = now_;
        room -= k.wire;
        fifo(node, nlin_ + f).push_back(id);
        ++r_.packets;
      }
    }
  }

  // The injection FIFO a message goes to: that of its first dimension-order hop (one per
  // direction, as BG/L's messaging layer), or the FIFOs in turn by post order.
  int fifo_of(i64 node, int msg) {
    auto& nic = nic_[static_cast<std::size_t>(node)];
    if (p_.injection_fifos > 0) return nic.posted++ % K_;
    i64 a = node, b = s_.messages[static_cast<std::size_t>(msg)].dst;
    for (int i = 0; i < nd_; ++i) {
      const auto D = static_cast<i64>(t_[i].extent);
      const int dir = direction(i, static_cast<int>(a % D), static_cast<int>(b % D));
      a /= D;
      b /= D;
      if (dir != 0) return 2 * i + (dir < 0 ? 1 : 0);
    }
    return 0;
  }

  void start_op(int op) {
    auto& o = ops_[static_cast<std::size_t>(op)];
    o.started = true;
    const i64 node = s_.ops[static_cast<std::size_t>(op)].node;
    auto& nic = nic_[static_cast<std::size_t>(node)];
    for (int m : o.sends) {
      const auto& msg = s_.messages[static_cast<std::size_t>(m)];
      if (msg.bytes <= 0 || msg.src == msg.dst)
        push(now_, ev::deliver, m, msg.bytes);  // local copies and empty messages need no network
      else
        nic.fifo_msgs[static_cast<std::size_t>(fifo_of(node, m))].push_back(m);
    }
    refill(node);
    serve(node);
    check_done(op);
  }

  void deliver(int msg, double payload) {
    auto& m = msgs_[static_cast<std::size_t>(msg)];
    m.undelivered -= payload;
    r_.payload_bytes += payload;
    if (m.undelivered > 1e-9 * std::max(1.0, s_.messages[static_cast<std::size_t>(msg)].bytes)) return;
    m.undelivered = -1e300;  // completes once
    const auto& sm = s_.messages[static_cast<std::size_t>(msg)];
    for (int op : {sm.send_op, sm.recv_op}) {
      --ops_[static_cast<std::size_t>(op)].outstanding;
      check_done(op);
    }
  }

  void check_done(int op) {
    auto& o = ops_[static_cast<std::size_t>(op)];
    if (o.done || !o.started || o.outstanding > 0) return;
    o.done = true;
    r_.op_finish[static_cast<std::size_t>(op)] = now_;
    end_ = std::max(end_, now_);
    for (int d : o.dependents)
      if (--ops_[static_cast<std::size_t>(d)].deps == 0) push(now_ + p_.host_delay, ev::op_start, d, 0);
  }

  struct nic_state {
    std::vector<std::vector<int>> fifo_msgs;  // per injection FIFO: its messages with bytes to cut
    std::vector<std::size_t> next;            // per FIFO: the message to cut from next
    std::size_t posted = 0;
  };

  const torus& t_;
  const packet_schedule& s_;
  const credit_params& p_;
  int nd_ = 0, nin_ = 0, V_ = 1, nlin_ = 0, K_ = 1;
  i64 P_ = 0;
  double now_ = 0, end_ = 0;
  std::uint64_t seq_ = 0;
  std::vector<link_state> links_;
  std::vector<double> credits_;  // [link * V + vc]: free bytes of the downstream VC FIFO
  std::vector<std::deque<int>> fifos_;
  std::vector<double> fifo_room_;
  std::vector<int> rr_, sub_rr_;
  std::vector<std::pair<double, int>> heads_;
  std::vector<nic_state> nic_;
  std::vector<packet> pk_;
  std::vector<int> free_;
  std::vector<message_state> msgs_;
  std::vector<op_state> ops_;
  std::priority_queue<event, std::vector<event>, std::greater<>> q_;
  credit_result r_;
};

}  // namespace

std::string to_string(credit_params::routing r) {
  return r == credit_params::routing::adaptive ? "adaptive" : "dimension-order";
}

std::string to_string(credit_params::injection i) {
  return i == credit_params::injection::in_order ? "in-order" : "interleaved";
}

credit_result simulate_credit(const torus& t, const packet_schedule& s, const credit_params& p) {
  for (int a = 0; a < t.ndims(); ++a)
    if (t[a].switched && t[a].extent > 1)
      throw error(errc::unsupported,
                  fmt::format("simulate_credit: axis {} is switched (the credit model covers rings and meshes)", a));
  expect(p.packet_bytes > p.header_bytes && p.header_bytes >= 0, "credit_params::packet_bytes", "> header_bytes >= 0",
         fmt::format("{} (header {})", p.packet_bytes, p.header_bytes));
  expect(p.input_bytes >= 2 * p.packet_bytes, "credit_params::input_bytes", ">= 2 packet_bytes (bubble flow control)",
         fmt::format("{}", p.input_bytes));
  expect(p.vcs >= 1 && p.vcs <= 8, "credit_params::vcs", "1 to 8", std::to_string(p.vcs));
  expect(p.route == credit_params::routing::dimension_order || p.vcs >= 2, "credit_params::vcs",
         ">= 2 for adaptive routing (VC 0 is the escape channel)", std::to_string(p.vcs));
  expect(p.injection_fifos >= 0, "credit_params::injection_fifos", ">= 0 (0: one per direction)",
         std::to_string(p.injection_fifos));
  expect(p.injection_bytes >= p.packet_bytes, "credit_params::injection_bytes", ">= packet_bytes",
         fmt::format("{}", p.injection_bytes));
  expect(p.host_delay >= 0, "credit_params::host_delay", ">= 0", fmt::format("{}", p.host_delay));
  engine e(t, s, p);
  return e.run();
}

}  // namespace toru::topology
