// SPDX-License-Identifier: BSD-3-Clause
#include "replay.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <tuple>
#include <type_traits>

namespace toru::tune::shim {
namespace {

using delay::blocking_send;
using delay::is_poll;
using delay::max_back;
using delay::sync_type;
using delay::tiny;
constexpr int tag_m = 7101, tag_token = 7102;

// A collective instance's owner rank: any hash every rank computes alike.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

// One all-to-all of byte buffers: out[r] goes to rank r, the result's [r] came from rank r.
std::vector<std::vector<char>> swap_bytes(const std::vector<std::vector<char>>& out, MPI_Comm comm) {
  const int n = static_cast<int>(out.size());
  std::vector<int> sc(out.size()), rc(out.size()), sd(out.size()), rd(out.size());
  for (int r = 0; r < n; ++r)
    sc[static_cast<std::size_t>(r)] = static_cast<int>(out[static_cast<std::size_t>(r)].size());
  PMPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, comm);
  std::vector<char> sbuf, rbuf;
  int st = 0, rt = 0;
  for (int r = 0; r < n; ++r) {
    const auto u = static_cast<std::size_t>(r);
    sd[u] = st;
    rd[u] = rt;
    st += sc[u];
    rt += rc[u];
    sbuf.insert(sbuf.end(), out[u].begin(), out[u].end());
  }
  rbuf.resize(static_cast<std::size_t>(rt) + 1);
  sbuf.resize(static_cast<std::size_t>(st) + 1);
  PMPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_BYTE, rbuf.data(), rc.data(), rd.data(), MPI_BYTE, comm);
  std::vector<std::vector<char>> in(out.size());
  for (std::size_t r = 0; r < out.size(); ++r) in[r].assign(rbuf.begin() + rd[r], rbuf.begin() + rd[r] + rc[r]);
  return in;
}

template <class T>
void put(std::vector<char>& b, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const char*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}
template <class T>
T get(const std::vector<char>& b, std::size_t& at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}
template <class T>
std::vector<T> records(const std::vector<char>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// Round 1: a send, to its receiver; a collective's arrival, to the instance's owner.
struct send_rec {
  std::int32_t index, tag, func;
  std::uint32_t seq;
  std::uint64_t key;
  double t0, t1;
};
struct coll_rec {
  std::uint64_t key;
  std::uint32_t seq;
  std::int32_t size, rank, index;
  double t0, t1;
};
// Round 2: the match of a send, back to its sender; an instance's outcome, to each member.
struct match_rec {
  std::int32_t send_index, recv_index, lr_wait, post;
  double caused_ls, lr_site, lr_amount, lr_end;
};
struct coll_reply {
  std::int32_t index, complete, last_rank, last_index;
  double last_t0;
};
// Round 3: a wait, to its delayer (followed by the victim's compute per region).
struct request_hdr {
  std::int32_t wait, v_at, d_at, kind;  // kind: 0 no previous synchronisation, 1 p2p (q), 2 collective
  std::int32_t q, ncv;
  std::uint32_t seq, pad;
  std::uint64_t key;
  double amount, end, wv;
};
struct region_compute {
  std::int64_t from, to;
  double c;
};
struct m_msg {
  std::int32_t wait, pad;
  double m;
};
struct token {
  std::int32_t k, done;
  std::uint64_t steps;
};
// Round 6: one entry of the merged lists.
struct top_entry {
  double value, caused, direct, compute, critical;
  std::int32_t rank, pad;
  std::int64_t from, to;
};

bool before(const top_entry& a, const top_entry& b) {
  if (a.rank < 0 || b.rank < 0) return b.rank < 0 && a.rank >= 0;
  return std::tie(b.value, a.rank, a.from, a.to) < std::tie(a.value, b.rank, b.from, b.to);
}

// MPI_Op: merges two lists of two halves (causes, critical segments), each sorted by `before`.
void merge_tops(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  PMPI_Type_size(*type, &bytes);
  const std::size_t half = static_cast<std::size_t>(bytes) / sizeof(top_entry) / 2;
  for (int l = 0; l < *len; ++l) {
    auto* a = static_cast<top_entry*>(in) + static_cast<std::size_t>(l) * 2 * half;
    auto* b = static_cast<top_entry*>(inout) + static_cast<std::size_t>(l) * 2 * half;
    for (std::size_t h = 0; h < 2; ++h) {
      std::vector<top_entry> m(2 * half);
      std::merge(a + h * half, a + (h + 1) * half, b + h * half, b + (h + 1) * half, m.begin(), before);
      std::copy(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(half), b + h * half);
    }
  }
}

struct pos {
  int rank = -1, at = -1;
};
struct wait {
  int at;
  pos delayer;
  double amount, end;
};
struct coll_info {
  bool complete = false;
  std::uint64_t key = 0;
  std::uint32_t seq = 0;
};
// A wait this rank delayed: its share per own region, and what it passes on to its own waits.
struct delayed {
  std::vector<std::pair<int, double>> direct;  // (cause, s)
  std::vector<int> passes_to;                  // own waits in the interval, earlier in the order
  double share = 0;
};

using region2 = std::pair<std::int64_t, std::int64_t>;

class replayer {
 public:
  replayer(const replay_input& in, MPI_Comm comm, std::size_t top) : in_(in), comm_(comm), top_(top) {
    PMPI_Comm_rank(comm, &me_);
    PMPI_Comm_size(comm, &n_);
    for (const event& e : in.events)
      if (sync_type(e.type)) seq_.push_back(e);
    std::stable_sort(seq_.begin(), seq_.end(), [](const event& a, const event& b) { return a.t0 < b.t0; });
    partner_.assign(seq_.size(), pos{});
    coll_.assign(seq_.size(), coll_info{});
    out_.sites.resize(in.site_ids.size());
  }

  replay_result run() {
    match();
    send_requests();
    propagate();
    critical_path();
    merge();
    return std::move(out_);
  }

 private:
  std::int64_t gid(int k) const {
    const int s = seq_[static_cast<std::size_t>(k)].site;
    return s >= 0 && static_cast<std::size_t>(s) < in_.site_ids.size() ? in_.site_ids[static_cast<std::size_t>(s)] : -1;
  }
  region2 region(int k) const { return {k > 0 ? gid(k - 1) : -1, gid(k)}; }
  double compute(int k) const {
    const double before = k > 0 ? seq_[static_cast<std::size_t>(k - 1)].compute : 0;
    return std::max(0.0, seq_[static_cast<std::size_t>(k)].compute - before);
  }
  site_waits* site(int k) {
    const int s = seq_[static_cast<std::size_t>(k)].site;
    return s >= 0 && static_cast<std::size_t>(s) < out_.sites.size() ? &out_.sites[static_cast<std::size_t>(s)]
                                                                     : nullptr;
  }
  int cause_id(const region2& r) {
    auto [it, fresh] = cause_index_.try_emplace(r, static_cast<int>(causes_.size()));
    if (fresh) causes_.push_back(wait_cause{.region = {me_, r.first, r.second}});
    return it->second;
  }
  void add_wait(int at, pos delayer, double amount, double end) {
    if (amount > 0) waits_.push_back(wait{at, delayer, amount, end});
  }
  int last_at_or_before(double t) const {
    auto it = std::upper_bound(seq_.begin(), seq_.end(), t, [](double x, const event& e) { return x < e.t0; });
    return static_cast<int>(it - seq_.begin()) - 1;
  }
  bool member(std::uint64_t key, int rank) const {
    auto it = in_.members.find(key);
    return it != in_.members.end() && std::find(it->second.begin(), it->second.end(), rank) != it->second.end();
  }
  // The order in which the serial analysis handles waits: an earlier wait passes its causes on.
  static auto order(double end, int rank, int at) { return std::make_tuple(end, rank, at); }

  // Rounds 1 and 2: the wait states, each on its victim; the site statistics.
  void match() {
    const auto n = static_cast<std::size_t>(n_);
    std::vector<std::vector<char>> sends(n), colls(n);
    for (std::size_t k = 0; k < seq_.size(); ++k) {
      const event& e = seq_[k];
      const auto ik = static_cast<std::int32_t>(k);
      if (e.type == ev_type::send && e.peer >= 0 && e.peer < n_)
        put(sends[static_cast<std::size_t>(e.peer)], send_rec{ik, e.tag, e.func, e.seq, e.key, e.t0, e.t1});
      if (e.type == ev_type::coll) {
        coll_index_[{e.key, e.seq}] = ik;
        put(colls[mix(e.key, e.seq) % n], coll_rec{e.key, e.seq, e.peer, me_, ik, e.t0, e.t1});
      }
    }
    const auto sent = swap_bytes(sends, comm_);
    const auto arrived = swap_bytes(colls, comm_);

    std::map<std::tuple<int, int, std::uint64_t, std::uint32_t>, send_rec> by_msg;
    for (std::size_t r = 0; r < n; ++r)
      for (const send_rec& s : records<send_rec>(sent[r])) by_msg[{static_cast<int>(r), s.tag, s.key, s.seq}] = s;
    std::vector<std::vector<char>> matches(n);
    std::map<std::uint32_t, std::pair<double, int>> group_late;  // the site statistics: a Waitall's largest
    std::map<std::uint32_t, std::size_t> group_wait;             // the delay analysis: the same, as a wait
    for (std::size_t k = 0; k < seq_.size(); ++k) {
      const event& e = seq_[k];
      if (e.type != ev_type::recv) continue;
      auto it = by_msg.find({e.peer, e.tag, e.key, e.seq});
      if (it == by_msg.end()) continue;
      const send_rec& s = it->second;
      const int ik = static_cast<int>(k);
      const pos sp{e.peer, s.index};
      partner_[k] = sp;
      match_rec m{s.index, ik, 0, -1, 0, 0, 0, 0};
      // Site statistics (late sender at the receive's site, its cause at the send's).
      const double late_site = std::max(0.0, std::min(s.t0, e.t1) - e.t0);
      m.caused_ls = late_site;
      if (e.group) {
        auto& g = group_late[e.group];
        if (late_site >= g.first) g = {late_site, ik};
      } else if (site_waits* w = site(ik)) {
        w->late_sender += late_site;
      }
      if (blocking_send(static_cast<std::uint16_t>(s.func))) {
        m.lr_site = std::max(0.0, std::min(e.tpost, s.t1) - s.t0);
        if (site_waits* w = site(ik)) w->caused_late_receiver += m.lr_site;
      }
      // The delay analysis's wait: reached by probing, the rank waited from the streak's first
      // probe less what it computed between probes.
      double entry = e.t0;
      if (k > 0 && is_poll(seq_[k - 1])) entry = std::min(e.t0, seq_[k - 1].t0 + (e.compute - seq_[k - 1].compute));
      const double late = std::min(s.t0, e.t1) - entry;
      bool lr_too = true;
      if (late > 0) {
        if (e.group) {
          auto [g, fresh] = group_wait.try_emplace(e.group, waits_.size());
          if (!fresh) {
            if (waits_[g->second].amount < late) waits_[g->second] = wait{ik, sp, late, entry + late};
            lr_too = false;
          } else {
            add_wait(ik, sp, late, entry + late);
          }
        } else {
          add_wait(ik, sp, late, entry + late);
        }
      }
      if (lr_too && blocking_send(static_cast<std::uint16_t>(s.func))) {
        const double lr = std::min(e.tpost, s.t1) - s.t0;
        const int post = last_at_or_before(e.tpost);
        if (lr > 0 && post >= 0) {
          m.lr_wait = 1;
          m.post = post;
          m.lr_amount = lr;
          m.lr_end = s.t0 + lr;
        }
      }
      put(matches[static_cast<std::size_t>(e.peer)], m);
    }
    for (const auto& [g, v] : group_late)
      if (site_waits* w = site(v.second)) w->late_sender += v.first;

    // Collective instances this rank owns: the last to arrive delays the others.
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<coll_rec>> instances;
    for (std::size_t r = 0; r < n; ++r)
      for (const coll_rec& c : records<coll_rec>(arrived[r])) instances[{c.key, c.seq}].push_back(c);
    std::vector<std::vector<char>> outcomes(n);
    for (auto& [key, m] : instances) {
      std::sort(m.begin(), m.end(), [](const coll_rec& a, const coll_rec& b) { return a.rank < b.rank; });
      const bool complete = static_cast<int>(m.size()) == m.front().size;
      const coll_rec* last = &m.front();
      for (const coll_rec& c : m)
        if (c.t0 > last->t0) last = &c;
      for (const coll_rec& c : m)
        put(outcomes[static_cast<std::size_t>(c.rank)],
            coll_reply{c.index, complete, last->rank, last->index, last->t0});
    }

    const auto matched = swap_bytes(matches, comm_);
    const auto outcome = swap_bytes(outcomes, comm_);
    for (std::size_t r = 0; r < n; ++r)
      for (const match_rec& m : records<match_rec>(matched[r])) {
        partner_[static_cast<std::size_t>(m.send_index)] = {static_cast<int>(r), m.recv_index};
        if (site_waits* w = site(m.send_index)) {
          w->caused_late_sender += m.caused_ls;
          w->late_receiver += m.lr_site;
        }
        if (m.lr_wait) add_wait(m.send_index, {static_cast<int>(r), m.post}, m.lr_amount, m.lr_end);
      }
    for (std::size_t r = 0; r < n; ++r)
      for (const coll_reply& c : records<coll_reply>(outcome[r])) {
        const event& e = seq_[static_cast<std::size_t>(c.index)];
        coll_[static_cast<std::size_t>(c.index)] = {c.complete != 0, e.key, e.seq};
        if (!c.complete) continue;
        if (site_waits* w = site(c.index)) w->wait_collective += std::max(0.0, std::min(c.last_t0, e.t1) - e.t0);
        if (c.last_rank != me_)
          add_wait(c.index, {c.last_rank, c.last_index}, std::min(c.last_t0, e.t1) - e.t0, c.last_t0);
      }
    for (std::size_t i = 0; i < waits_.size(); ++i) waits_at_.emplace_back(waits_[i].at, static_cast<int>(i));
    std::sort(waits_at_.begin(), waits_at_.end());
  }

  // Compute per region over events (from, to], and this rank's own waits in (from, to).
  void interval(int from, int to, std::map<region2, double>& regions, double& waited, std::vector<int>* waits) const {
    for (int k = from + 1; k <= to; ++k)
      if (const double c = compute(k); c > 0) regions[region(k)] += c;
    for (auto it = std::upper_bound(waits_at_.begin(), waits_at_.end(), std::pair<int, int>{from, 1 << 30});
         it != waits_at_.end() && it->first < to; ++it) {
      waited += waits_[static_cast<std::size_t>(it->second)].amount;
      if (waits) waits->push_back(it->second);
    }
  }

  // Round 3: every wait to its delayer, which shares it among its own regions.
  void send_requests() {
    std::vector<std::vector<char>> out(static_cast<std::size_t>(n_));
    for (std::size_t i = 0; i < waits_.size(); ++i) {
      const wait& w = waits_[i];
      request_hdr h{};
      h.wait = static_cast<std::int32_t>(i);
      h.v_at = w.at;
      h.d_at = w.delayer.at;
      h.amount = w.amount;
      h.end = w.end;
      // The previous synchronisation of the two ranks: where both were last together.
      int v0 = -1;
      for (int k = w.at - 1; k >= 0 && k >= w.at - max_back; --k) {
        const pos p = partner_[static_cast<std::size_t>(k)];
        if (p.rank == w.delayer.rank) {
          if (p.at >= 0 && p.at < w.delayer.at) {
            v0 = k;
            h.kind = 1;
            h.q = p.at;
            break;
          }
          continue;
        }
        const coll_info& c = coll_[static_cast<std::size_t>(k)];
        if (c.complete && member(c.key, w.delayer.rank)) {
          v0 = k;
          h.kind = 2;
          h.key = c.key;
          h.seq = c.seq;
          break;
        }
      }
      std::map<region2, double> cv;
      double wv = 0;
      interval(v0, w.at, cv, wv, nullptr);
      h.wv = wv;
      h.ncv = static_cast<std::int32_t>(cv.size());
      auto& b = out[static_cast<std::size_t>(w.delayer.rank)];
      put(b, h);
      for (const auto& [r, c] : cv) put(b, region_compute{r.first, r.second, c});
    }
    const auto in = swap_bytes(out, comm_);
    for (std::size_t v = 0; v < in.size(); ++v)
      for (std::size_t at = 0; at < in[v].size();) {
        const auto h = get<request_hdr>(in[v], at);
        std::map<region2, double> cv;
        for (int j = 0; j < h.ncv; ++j) {
          const auto rc = get<region_compute>(in[v], at);
          cv[{rc.from, rc.to}] = rc.c;
        }
        delayed_index_[{static_cast<int>(v), h.wait}] = delayed_.size();
        delayed_.push_back(share_out(static_cast<int>(v), h, cv));
      }
  }

  delayed share_out(int v, const request_hdr& h, const std::map<region2, double>& cv) {
    delayed d;
    int d0 = -1;
    if (h.kind == 1) d0 = h.q;
    if (h.kind == 2) {
      auto it = coll_index_.find({h.key, h.seq});
      // The collective came after the event the victim waited at (threads reordered the calls):
      // no interval the two agree on, so the wait stays unattributed rather than misattributed.
      if (it == coll_index_.end() || it->second >= h.d_at) return d;
      d0 = it->second;
    }
    std::map<region2, double> cd;
    double wd = 0;
    std::vector<int> d_waits;
    interval(d0, h.d_at, cd, wd, &d_waits);
    std::vector<std::pair<int, double>> excess;
    double total = 0;
    for (const auto& [r, c] : cd) {
      auto it = cv.find(r);
      const double e = c - (it == cv.end() ? 0.0 : it->second);
      if (e <= 0) continue;
      excess.emplace_back(cause_id(r), e);
      total += e;
    }
    const double wait_excess = std::max(0.0, wd - h.wv);
    total += wait_excess;
    if (total <= 0) return d;
    const double scale = h.amount / total;
    for (auto [id, e] : excess) {
      d.direct.emplace_back(id, scale * e);
      causes_[static_cast<std::size_t>(id)].direct += scale * e;
    }
    if (wait_excess > 0 && wd > 0) {
      d.share = scale * wait_excess / wd;
      const auto mine = order(h.end, v, h.v_at);
      for (int i : d_waits) {
        const wait& w = waits_[static_cast<std::size_t>(i)];
        if (order(w.end, me_, w.at) < mine) d.passes_to.push_back(i);
      }
    }
    return d;
  }

  // Round 4: a wait's weight (itself plus what later waits passed on to it) reaches its delayer
  // once every later wait that passes to it has been weighed: latest first, in batches per delayer.
  void propagate() {
    std::vector<int> pending(waits_.size(), 0);
    std::vector<double> weight(waits_.size(), 1.0);
    for (const delayed& d : delayed_)
      for (int i : d.passes_to) ++pending[static_cast<std::size_t>(i)];
    // Weights travel in batches, one message per delayer for all that became ready together: a
    // message per wait cost a latency each (10 ms of GROMACS' 21,000 events on 2 ranks).
    std::vector<std::vector<m_msg>> outbox(static_cast<std::size_t>(n_));
    std::deque<std::vector<m_msg>> sent;
    std::vector<MPI_Request> reqs;
    auto ready = [&](int i) {
      outbox[static_cast<std::size_t>(waits_[static_cast<std::size_t>(i)].delayer.rank)].push_back(
          m_msg{i, 0, weight[static_cast<std::size_t>(i)]});
    };
    auto flush = [&] {
      for (int r = 0; r < n_; ++r) {
        auto& box = outbox[static_cast<std::size_t>(r)];
        if (box.empty()) continue;
        sent.push_back(std::move(box));
        box.clear();
        reqs.emplace_back();
        PMPI_Isend(sent.back().data(), static_cast<int>(sent.back().size() * sizeof(m_msg)), MPI_BYTE, r, tag_m, comm_,
                   &reqs.back());
      }
    };
    for (std::size_t i = 0; i < waits_.size(); ++i)
      if (pending[i] == 0) ready(static_cast<int>(i));
    flush();
    std::vector<m_msg> batch;
    for (std::size_t got = 0; got < delayed_.size();) {
      MPI_Status st;
      PMPI_Probe(MPI_ANY_SOURCE, tag_m, comm_, &st);
      int bytes = 0;
      PMPI_Get_count(&st, MPI_BYTE, &bytes);
      batch.resize(static_cast<std::size_t>(bytes) / sizeof(m_msg));
      PMPI_Recv(batch.data(), bytes, MPI_BYTE, st.MPI_SOURCE, tag_m, comm_, MPI_STATUS_IGNORE);
      got += batch.size();
      for (const m_msg& m : batch) {
        const delayed& d = delayed_[delayed_index_.at({st.MPI_SOURCE, m.wait})];
        for (auto [id, c] : d.direct) {
          causes_[static_cast<std::size_t>(id)].caused += m.m * c;
          attributed_ += m.m * c;
        }
        for (int i : d.passes_to) {
          weight[static_cast<std::size_t>(i)] += d.share * m.m;
          if (--pending[static_cast<std::size_t>(i)] == 0) ready(i);
        }
      }
      flush();
    }
    PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  }

  // Round 5: backwards from the last rank to finish; at a wait the path continues on its delayer.
  void critical_path() {
    struct {
      double t;
      int rank;
    } last{seq_.empty() ? -1e300 : seq_.back().t1, me_}, first{};
    PMPI_Allreduce(&last, &first, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm_);
    unsigned long long mine = seq_.size(), total = 0;
    PMPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm_);
    if (first.t <= -1e300) return;
    const std::uint64_t limit = 2 * total + 2;
    std::map<region2, double> path;
    // Walks from event k; returns true when the path ended here, false when it moved on.
    auto walk = [&](int k, bool jumped, std::uint64_t steps) {
      for (; k >= 0 && steps < limit; ++steps) {
        if (!jumped) {
          const wait* big = nullptr;
          for (auto it = std::lower_bound(waits_at_.begin(), waits_at_.end(), std::pair<int, int>{k, -1});
               it != waits_at_.end() && it->first == k; ++it) {
            const wait& c = waits_[static_cast<std::size_t>(it->second)];
            if (c.amount > tiny && (!big || c.amount > big->amount)) big = &c;
          }
          if (big) {
            if (big->delayer.rank != me_) {
              const token t{big->delayer.at, 0, steps + 1};
              PMPI_Send(&t, sizeof t, MPI_BYTE, big->delayer.rank, tag_token, comm_);
              return false;
            }
            k = big->delayer.at;
            jumped = true;
            continue;
          }
        }
        jumped = false;
        if (const double c = compute(k); c > 0) {
          path[region(k)] += c;
          out_.critical_compute += c;
        }
        --k;
      }
      const token done{0, 1, 0};
      for (int r = 0; r < n_; ++r)
        if (r != me_) PMPI_Send(&done, sizeof done, MPI_BYTE, r, tag_token, comm_);
      return true;
    };
    bool ended = first.rank == me_ && walk(static_cast<int>(seq_.size()) - 1, false, 0);
    while (!ended) {
      token t{};
      PMPI_Recv(&t, sizeof t, MPI_BYTE, MPI_ANY_SOURCE, tag_token, comm_, MPI_STATUS_IGNORE);
      ended = t.done || walk(t.k, true, t.steps);
    }
    for (const auto& [r, t] : path) {
      critical_.push_back({{me_, r.first, r.second}, t});
      if (auto it = cause_index_.find(r); it != cause_index_.end())
        causes_[static_cast<std::size_t>(it->second)].critical = t;
    }
  }

  // Round 6: the largest causes and critical segments of all ranks, and the causes' excess over
  // the other ranks' mean compute in the same region.
  void merge() {
    std::map<region2, double> compute_in;
    for (int k = 0; k < static_cast<int>(seq_.size()); ++k) compute_in[region(k)] += compute(k);
    std::vector<top_entry> causes, path;
    for (const wait_cause& c : causes_)
      if (c.caused > 0 || c.critical > 0)
        causes.push_back({c.caused, c.caused, c.direct, compute_in[{c.region.from, c.region.to}], c.critical, me_, 0,
                          c.region.from, c.region.to});
    for (const critical_segment& s : critical_)
      path.push_back({s.time, 0, 0, 0, s.time, me_, 0, s.region.from, s.region.to});
    std::vector<top_entry> mine(2 * top_, top_entry{0, 0, 0, 0, 0, -1, 0, -1, -1}), all(2 * top_);
    for (auto* list : {&causes, &path}) {
      std::sort(list->begin(), list->end(), before);
      std::copy_n(list->begin(), std::min(list->size(), top_), mine.begin() + (list == &path ? top_ : 0));
    }
    MPI_Datatype type;
    PMPI_Type_contiguous(static_cast<int>(2 * top_ * sizeof(top_entry)), MPI_BYTE, &type);
    PMPI_Type_commit(&type);
    MPI_Op op;
    PMPI_Op_create(merge_tops, 1, &op);
    PMPI_Allreduce(mine.data(), all.data(), 1, type, op, comm_);
    PMPI_Op_free(&op);
    PMPI_Type_free(&type);

    double sums[2] = {0, attributed_}, totals[2] = {};
    for (const wait& w : waits_) sums[0] += w.amount;
    PMPI_Allreduce(sums, totals, 2, MPI_DOUBLE, MPI_SUM, comm_);
    rootcause_result& rc = out_.rootcause;
    rc.total_wait = totals[0];
    rc.attributed = totals[1];
    std::vector<double> in_region(top_, 0.0), everyone(top_, 0.0);
    for (std::size_t i = 0; i < top_ && all[i].rank >= 0; ++i) {
      auto it = compute_in.find({all[i].from, all[i].to});
      in_region[i] = it == compute_in.end() ? 0 : it->second;
    }
    PMPI_Allreduce(in_region.data(), everyone.data(), static_cast<int>(top_), MPI_DOUBLE, MPI_SUM, comm_);
    for (std::size_t i = 0; i < top_ && all[i].rank >= 0; ++i) {
      const top_entry& e = all[i];
      const double others = everyone[i] - e.compute;
      rc.causes.push_back(wait_cause{.region = {e.rank, e.from, e.to},
                                     .caused = e.caused,
                                     .direct = e.direct,
                                     .compute = e.compute,
                                     .excess = n_ > 1 ? e.compute - others / (n_ - 1) : 0,
                                     .critical = e.critical});
    }
    for (std::size_t i = top_; i < 2 * top_ && all[i].rank >= 0; ++i)
      rc.critical.push_back({{all[i].rank, all[i].from, all[i].to}, all[i].value});
  }

  const replay_input& in_;
  MPI_Comm comm_;
  std::size_t top_;
  int me_ = 0, n_ = 1;
  std::vector<event> seq_;
  std::vector<pos> partner_;     // p2p: the matching event
  std::vector<coll_info> coll_;  // collective: its instance
  std::map<std::pair<std::uint64_t, std::uint32_t>, int> coll_index_;
  std::vector<wait> waits_;                                   // this rank's, as victim
  std::vector<std::pair<int, int>> waits_at_;                 // (event, wait), sorted
  std::vector<delayed> delayed_;                              // waits of others this rank delayed
  std::map<std::pair<int, int>, std::size_t> delayed_index_;  // (victim, its wait) -> delayed_
  std::map<region2, int> cause_index_;
  std::vector<wait_cause> causes_;
  std::vector<critical_segment> critical_;
  double attributed_ = 0;
  replay_result out_;
};

}  // namespace

replay_result replay(const replay_input& in, MPI_Comm comm, std::size_t top) {
  MPI_Comm dup;
  PMPI_Comm_dup(comm, &dup);
  replay_result r = replayer(in, dup, std::max<std::size_t>(top, 1)).run();
  PMPI_Comm_free(&dup);
  return r;
}

}  // namespace toru::tune::shim
