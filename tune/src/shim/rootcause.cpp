// SPDX-License-Identifier: BSD-3-Clause
#include "rootcause.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace toru::tune::shim {
namespace {

using delay::is_poll;
using delay::max_back;
using delay::sync_type;
using delay::tiny;

struct pos {
  int rank = -1, at = -1;
};

struct wait_state {
  pos victim, delayer;  // delayer.at: the delayer's event it arrived at late
  double amount = 0, end = 0;
  std::vector<std::pair<int, double>> causes{};  // (cause id, seconds), filled in order of `end`
  bool done = false;
};

struct msg {
  int src, dst, tag;
  std::uint64_t comm;
  std::uint32_t seq;
  bool operator<(const msg& o) const {
    return std::tie(src, dst, tag, comm, seq) < std::tie(o.src, o.dst, o.tag, o.comm, o.seq);
  }
};

class analysis {
 public:
  explicit analysis(const std::vector<std::vector<event>>& events) : n_(events.size()), seq_(n_) {
    for (std::size_t r = 0; r < n_; ++r) {
      for (const event& e : events[r])
        if (sync_type(e.type)) seq_[r].push_back(e);
      // Events are pushed at exit: a thread's calls are in order already, the sort only merges the
      // few made by other threads. Stable, so a Waitall's receives stay in order.
      std::stable_sort(seq_[r].begin(), seq_[r].end(), [](const event& a, const event& b) { return a.t0 < b.t0; });
    }
    partner_.resize(n_);
    coll_of_.resize(n_);
    waits_at_.resize(n_);
    for (std::size_t r = 0; r < n_; ++r) {
      partner_[r].assign(seq_[r].size(), pos{});
      coll_of_[r].assign(seq_[r].size(), -1);
    }
  }

  rootcause_result run() {
    match();
    std::vector<int> order(waits_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    // Ties in `end` broken by the victim's place, as replay.cpp does across ranks: the propagation
    // into an earlier wait must follow the same order in both.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const wait_state &x = waits_[static_cast<std::size_t>(a)], &y = waits_[static_cast<std::size_t>(b)];
      return std::tie(x.end, x.victim.rank, x.victim.at) < std::tie(y.end, y.victim.rank, y.victim.at);
    });
    for (int w : order) attribute(waits_[static_cast<std::size_t>(w)]);
    return result();
  }

 private:
  const event& at(pos p) const { return seq_[static_cast<std::size_t>(p.rank)][static_cast<std::size_t>(p.at)]; }

  region_key region(int rank, int k) const {
    const auto& s = seq_[static_cast<std::size_t>(rank)];
    return {rank, k > 0 ? s[static_cast<std::size_t>(k - 1)].site : -1, s[static_cast<std::size_t>(k)].site};
  }
  double compute(int rank, int k) const {
    const auto& s = seq_[static_cast<std::size_t>(rank)];
    const double before = k > 0 ? s[static_cast<std::size_t>(k - 1)].compute : 0;
    return std::max(0.0, s[static_cast<std::size_t>(k)].compute - before);
  }
  int cause_id(const region_key& k) {
    auto [it, fresh] = cause_index_.try_emplace(k, static_cast<int>(causes_.size()));
    if (fresh) causes_.push_back(wait_cause{.region = k});
    return it->second;
  }

  void add_wait(pos victim, pos delayer, double amount, double end) {
    if (amount <= 0) return;
    waits_.push_back(wait_state{.victim = victim, .delayer = delayer, .amount = amount, .end = end});
  }

  // The last event of `rank` entered at or before t (the post of a receive).
  int last_at_or_before(int rank, double t) const {
    const auto& s = seq_[static_cast<std::size_t>(rank)];
    auto it = std::upper_bound(s.begin(), s.end(), t, [](double x, const event& e) { return x < e.t0; });
    return static_cast<int>(it - s.begin()) - 1;
  }

  // Finds the wait states (the patterns of analysis.cpp's wait_states, here with their delayers).
  void match() {
    std::map<msg, pos> sends;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<pos>> colls;
    for (std::size_t r = 0; r < n_; ++r)
      for (std::size_t k = 0; k < seq_[r].size(); ++k) {
        const event& e = seq_[r][k];
        const pos p{static_cast<int>(r), static_cast<int>(k)};
        if (e.type == ev_type::send) sends[{p.rank, e.peer, e.tag, e.key, e.seq}] = p;
        if (e.type == ev_type::coll) colls[{e.key, e.seq}].push_back(p);
      }
    // A Waitall waits for its latest message only: one wait state per group, its largest.
    std::map<std::pair<int, std::uint32_t>, std::size_t> group_wait;
    for (std::size_t r = 0; r < n_; ++r)
      for (std::size_t k = 0; k < seq_[r].size(); ++k) {
        const event& e = seq_[r][k];
        if (e.type != ev_type::recv) continue;
        auto it = sends.find({e.peer, static_cast<int>(r), e.tag, e.key, e.seq});
        if (it == sends.end()) continue;
        const pos rp{static_cast<int>(r), static_cast<int>(k)}, sp = it->second;
        partner_[r][k] = sp;
        partner_[static_cast<std::size_t>(sp.rank)][static_cast<std::size_t>(sp.at)] = rp;
        const event& s = at(sp);
        // Reached by probing (MPI_Iprobe until a message is there): the rank waited from the
        // streak's first probe, less what it computed between its probes.
        double entry = e.t0;
        if (k > 0 && is_poll(seq_[r][k - 1]))
          entry = std::min(e.t0, seq_[r][k - 1].t0 + (e.compute - seq_[r][k - 1].compute));
        const double late = std::min(s.t0, e.t1) - entry;
        if (late > 0) {
          if (e.group) {
            auto [g, fresh] = group_wait.try_emplace({rp.rank, e.group}, waits_.size());
            if (!fresh && waits_[g->second].amount >= late) continue;
            if (!fresh) {
              waits_[g->second] = wait_state{.victim = rp, .delayer = sp, .amount = late, .end = entry + late};
              continue;
            }
          }
          add_wait(rp, sp, late, entry + late);
        }
        if (delay::blocking_send(s.func)) {
          const double lr = std::min(e.tpost, s.t1) - s.t0;
          const int post = last_at_or_before(rp.rank, e.tpost);
          if (lr > 0 && post >= 0) add_wait(sp, {rp.rank, post}, lr, s.t0 + lr);
        }
      }
    for (auto& [key, members] : colls) {
      if (members.empty() || static_cast<int>(members.size()) != at(members.front()).peer) continue;
      std::sort(members.begin(), members.end(), [](pos a, pos b) { return a.rank < b.rank; });
      const int id = static_cast<int>(coll_members_.size());
      pos last = members.front();
      for (pos m : members) {
        coll_of_[static_cast<std::size_t>(m.rank)][static_cast<std::size_t>(m.at)] = id;
        if (at(m).t0 > at(last).t0) last = m;
      }
      for (pos m : members)
        if (m.rank != last.rank) add_wait(m, last, std::min(at(last).t0, at(m).t1) - at(m).t0, at(last).t0);
      coll_members_.push_back(members);
    }
    for (std::size_t i = 0; i < waits_.size(); ++i) {
      const pos v = waits_[i].victim;
      waits_at_[static_cast<std::size_t>(v.rank)].emplace_back(v.at, static_cast<int>(i));
    }
    for (auto& w : waits_at_) std::sort(w.begin(), w.end());
  }

  // The event of `other` that synchronised with `rank`'s event k, or -1.
  int sync_partner(int rank, int k, int other) const {
    const pos p = partner_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(k)];
    if (p.rank == other) return p.at;
    const int c = coll_of_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(k)];
    if (c < 0) return -1;
    const auto& m = coll_members_[static_cast<std::size_t>(c)];
    auto it = std::lower_bound(m.begin(), m.end(), other, [](pos a, int r) { return a.rank < r; });
    return it != m.end() && it->rank == other ? it->at : -1;
  }

  // Compute per region of `rank` over its events (from, to], and its own waits in (from, to).
  void interval(int rank, int from, int to, std::map<std::pair<std::int64_t, std::int64_t>, double>& regions,
                double& waited, std::vector<int>* waits) const {
    for (int k = from + 1; k <= to; ++k) {
      const region_key g = region(rank, k);
      const double c = compute(rank, k);
      if (c > 0) regions[{g.from, g.to}] += c;
    }
    const auto& w = waits_at_[static_cast<std::size_t>(rank)];
    for (auto it = std::upper_bound(w.begin(), w.end(), std::pair<int, int>{from, 1 << 30});
         it != w.end() && it->first < to; ++it) {
      waited += waits_[static_cast<std::size_t>(it->second)].amount;
      if (waits) waits->push_back(it->second);
    }
  }

  void attribute(wait_state& w) {
    const pos v = w.victim, d = w.delayer;
    // The previous synchronisation of the two ranks: where both were last together.
    int v0 = -1, d0 = -1;
    for (int k = v.at - 1; k >= 0 && k >= v.at - max_back; --k) {
      const int q = sync_partner(v.rank, k, d.rank);
      if (q >= 0 && q < d.at) {
        v0 = k;
        d0 = q;
        break;
      }
    }
    std::map<std::pair<std::int64_t, std::int64_t>, double> cv, cd;
    double wv = 0, wd = 0;
    std::vector<int> d_waits;
    interval(v.rank, v0, v.at, cv, wv, nullptr);
    interval(d.rank, d0, d.at, cd, wd, &d_waits);
    // The delay: how much longer the delayer spent per region, and waiting, than the victim.
    std::vector<std::pair<int, double>> excess;
    double total = 0;
    for (const auto& [r, c] : cd) {
      auto it = cv.find(r);
      const double e = c - (it == cv.end() ? 0.0 : it->second);
      if (e <= 0) continue;
      excess.emplace_back(cause_id({d.rank, r.first, r.second}), e);
      total += e;
    }
    const double wait_excess = std::max(0.0, wd - wv);
    total += wait_excess;
    if (total <= 0) {
      w.done = true;
      return;
    }
    // Scaled so the wait is shared out in full (the delay's absolute size differs from the wait by
    // the MPI time the two ranks spend, which is not compute).
    const double scale = w.amount / total;
    std::unordered_map<int, double> acc;
    for (auto [id, e] : excess) {
      acc[id] += scale * e;
      causes_[static_cast<std::size_t>(id)].direct += scale * e;
    }
    if (wait_excess > 0 && wd > 0) {
      const double share = scale * wait_excess / wd;
      for (int i : d_waits)
        for (auto [id, c] : waits_[static_cast<std::size_t>(i)].causes) acc[id] += share * c;
    }
    w.causes.assign(acc.begin(), acc.end());
    w.done = true;
  }

  void critical_path(rootcause_result& out) {
    out.critical_rank.assign(n_, 0.0);
    int r = -1;
    double t_end = -1e300;
    std::size_t total = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      total += seq_[i].size();
      if (!seq_[i].empty() && seq_[i].back().t1 > t_end) {
        t_end = seq_[i].back().t1;
        r = static_cast<int>(i);
      }
    }
    if (r < 0) return;
    int k = static_cast<int>(seq_[static_cast<std::size_t>(r)].size()) - 1;
    bool jumped = false;
    std::map<region_key, double> path;
    // Backwards from the last rank to finish: where it waited, the path continues on the rank it
    // waited for, from the event that rank arrived at late. Every step moves back in time.
    for (std::size_t steps = 0; k >= 0 && steps < 2 * total + 2; ++steps) {
      if (!jumped) {
        const auto& w = waits_at_[static_cast<std::size_t>(r)];
        const wait_state* big = nullptr;
        for (auto it = std::lower_bound(w.begin(), w.end(), std::pair<int, int>{k, -1});
             it != w.end() && it->first == k; ++it) {
          const wait_state& c = waits_[static_cast<std::size_t>(it->second)];
          if (c.amount > tiny && (!big || c.amount > big->amount)) big = &c;
        }
        if (big) {
          r = big->delayer.rank;
          k = big->delayer.at;
          jumped = true;
          continue;
        }
      }
      jumped = false;
      const double c = compute(r, k);
      if (c > 0) {
        path[region(r, k)] += c;
        out.critical_rank[static_cast<std::size_t>(r)] += c;
      }
      --k;
    }
    for (const auto& [g, t] : path) {
      out.critical.push_back({g, t});
      if (auto it = cause_index_.find(g); it != cause_index_.end())
        causes_[static_cast<std::size_t>(it->second)].critical = t;
    }
    std::stable_sort(out.critical.begin(), out.critical.end(),
                     [](const critical_segment& a, const critical_segment& b) { return a.time > b.time; });
  }

  rootcause_result result() {
    rootcause_result out;
    for (const wait_state& w : waits_) {
      out.total_wait += w.amount;
      for (auto [id, c] : w.causes) {
        causes_[static_cast<std::size_t>(id)].caused += c;
        out.attributed += c;
      }
    }
    // Every rank's compute per region (from, to): a cause's excess is over the other ranks' mean.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> per_rank;
    for (std::size_t r = 0; r < n_; ++r)
      for (std::size_t k = 0; k < seq_[r].size(); ++k) {
        const region_key g = region(static_cast<int>(r), static_cast<int>(k));
        auto& v = per_rank[{g.from, g.to}];
        v.resize(n_);
        v[r] += compute(static_cast<int>(r), static_cast<int>(k));
      }
    for (wait_cause& c : causes_) {
      const auto& v = per_rank[{c.region.from, c.region.to}];
      double others = 0;
      for (std::size_t r = 0; r < v.size(); ++r)
        if (static_cast<int>(r) != c.region.rank) others += v[r];
      c.compute = v.empty() ? 0 : v[static_cast<std::size_t>(c.region.rank)];
      c.excess = n_ > 1 ? c.compute - others / static_cast<double>(n_ - 1) : 0;
    }
    critical_path(out);
    out.causes = causes_;
    std::erase_if(out.causes, [](const wait_cause& c) { return c.caused <= 0 && c.critical <= 0; });
    std::stable_sort(out.causes.begin(), out.causes.end(),
                     [](const wait_cause& a, const wait_cause& b) { return a.caused > b.caused; });
    return out;
  }

  std::size_t n_;
  std::vector<std::vector<event>> seq_;
  std::vector<std::vector<pos>> partner_;  // p2p: the matching event
  std::vector<std::vector<int>> coll_of_;  // coll: the instance
  std::vector<std::vector<pos>> coll_members_;
  std::vector<wait_state> waits_;
  std::vector<std::vector<std::pair<int, int>>> waits_at_;  // per rank: (event, wait), sorted
  std::map<region_key, int> cause_index_;
  std::vector<wait_cause> causes_;
};

}  // namespace

rootcause_result root_causes(const std::vector<std::vector<event>>& events) { return analysis(events).run(); }

}  // namespace toru::tune::shim
