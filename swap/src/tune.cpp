// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::swap {

std::string_view to_string(strategy s) noexcept {
  switch (s) {
    case strategy::none:
      return "none";
    case strategy::swap:
      return "swap";
    case strategy::recompute:
      return "recompute";
    case strategy::hybrid:
      return "hybrid";
    case strategy::automatic:
      return "auto";
  }
  return "?";
}

strategy parse_strategy(std::string_view name) {
  if (name == "none") return strategy::none;
  if (name == "swap") return strategy::swap;
  if (name == "recompute") return strategy::recompute;
  if (name == "hybrid") return strategy::hybrid;
  if (name == "auto" || name == "automatic") return strategy::automatic;
  throw error(errc::invalid_argument,
              fmt::format("strategy: expected none, swap, recompute, hybrid or auto, got '{}'", name));
}

namespace {

// Layer units when they can drop a fair share of what block units drop (CNNs with batch norm:
// the conv outputs), block units otherwise (plain conv-relu chains, where a layer unit keeps all).
std::vector<unit> pick_units(const graph& g, bool fine) {
  auto blocks = find_units(g, 64, false);
  if (!fine) return blocks;
  auto layers = find_units(g, 64, true);
  std::int64_t b = 0, l = 0;
  for (const auto& u : blocks) b += u.bytes;
  for (const auto& u : layers) l += u.bytes;
  return 4 * l >= b ? layers : blocks;
}

struct candidate {
  swap_options swap;
  plan p;
  sim_result r;
  bool valid = false;
};

class tuner {
 public:
  tuner(const graph& training, const tune_options& o)
      : base_(std::make_shared<const graph>(training)), o_(o), units_(pick_units(training, o.fine_units)) {}

  int evaluations = 0;
  const std::vector<unit>& units() const { return units_; }
  // A unit that drops something and that the caller can recompute.
  bool candidate_unit(const unit& u) const { return u.bytes > 0 && (!o_.can_recompute || o_.can_recompute(u)); }

  candidate eval(const std::shared_ptr<const graph>& g, const swap_options& s) {
    ++evaluations;
    candidate c;
    c.swap = s;
    c.p = make_plan(g, s);
    c.r = simulate(c.p, o_.device, o_.sim);
    c.valid = true;
    return c;
  }

  static bool better(const candidate& a, const candidate& b) {
    if (!b.valid) return a.valid;
    if (!a.valid) return false;
    if (a.r.fits != b.r.fits) return a.r.fits;
    if (!a.r.fits) return a.r.peak_bytes < b.r.peak_bytes;
    return a.r.step_seconds < b.r.step_seconds * (1 - 1e-9);
  }

  // The current parameters and a few looser ones: recomputing a unit frees memory that a looser sync
  // mode or an earlier prefetch can use. Cheaper than a full re-tune for every unit tried.
  candidate eval_relaxed(const std::shared_ptr<const graph>& g, const swap_options& cur) {
    candidate best = eval(g, cur);
    // Looser settings only use more memory: when the current ones overflow, so would they.
    if (!best.r.fits) return best;
    std::vector<swap_options> vs;
    auto with = [&](auto f) {
      swap_options v = cur;
      f(v);
      vs.push_back(v);
    };
    if (cur.sync != sync_mode::none) with([](swap_options& v) { v.sync = sync_mode::none; });
    if (cur.sync == sync_mode::both) {
      with([](swap_options& v) { v.sync = sync_mode::d2h; });
      with([](swap_options& v) { v.sync = sync_mode::h2d; });
    }
    if (cur.ahead > 0) with([](swap_options& v) { v.ahead *= 2; });
    // Memory freed by recomputation may let larger tensors be prefetched rather than just in time.
    if (cur.prefetch_max_bytes < INT64_MAX / 2) with([](swap_options& v) { v.prefetch_max_bytes *= 2; });
    if (cur.delay_max_bytes < INT64_MAX / 2) with([](swap_options& v) { v.delay_max_bytes *= 2; });
    for (const auto& v : vs) {
      auto c = eval(g, v);
      if (better(c, best)) best = std::move(c);
    }
    return best;
  }

  // No swapping: the level order, or the depth-first one when only that fits.
  candidate lean_none(const std::shared_ptr<const graph>& g) {
    candidate c = eval(g, {});
    if (c.r.fits) return c;
    swap_options s;
    s.order = schedule_order::depth_first;
    candidate d = eval(g, s);
    return better(d, c) ? d : c;
  }

  // The leanest swap configuration: threshold 1, escalating sync modes (TFLMS).
  candidate leanest_swap(const std::shared_ptr<const graph>& g) {
    candidate best;
    for (int m = 0; m <= 3; ++m)
      for (auto order : {schedule_order::by_level, schedule_order::depth_first}) {
        swap_options s;
        s.threshold = 1;
        s.sync = static_cast<sync_mode>(m);
        s.swapout_delay = 0;
        s.order = order;
        auto c = eval(g, s);
        if (c.r.fits) return c;
        if (!best.valid || c.r.peak_bytes < best.r.peak_bytes) best = std::move(c);
      }
    return best;
  }

  // TFLMS v2's own search (LMS._search_params), for a like-for-like baseline: level order,
  // swapout delay 1, escalate sync mode until threshold 1 fits, then the largest feasible threshold,
  // ahead and groupby by binary search, in that order. No time model.
  candidate tflms_swap(const std::shared_ptr<const graph>& g) {
    swap_options s;
    candidate none = eval(g, s);
    if (none.r.fits) return none;
    candidate c;
    for (int m = 0; m <= 3; ++m) {
      s.threshold = 1;
      s.ahead = 1;
      s.groupby = 0;
      s.sync = static_cast<sync_mode>(m);
      c = eval(g, s);
      if (c.r.fits) break;
    }
    if (!c.r.fits) return c;
    const int levels = c.p.lv.count();
    auto largest = [&](int lo, int hi, auto set) {
      candidate best = c;
      while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        swap_options v = best.swap;
        set(v, mid);
        auto m = eval(g, v);
        if (m.r.fits) {
          lo = mid;
          best = std::move(m);
        } else {
          hi = mid - 1;
        }
      }
      return best;
    };
    c = largest(1, levels, [](swap_options& v, int x) { v.threshold = x; });
    if (c.swap.sync == sync_mode::none || c.swap.sync == sync_mode::d2h) {
      c = largest(1, levels, [](swap_options& v, int x) { v.ahead = x; });
      swap_options v = c.swap;
      v.groupby = levels;
      auto all = eval(g, v);
      c = all.r.fits ? std::move(all) : largest(0, levels, [](swap_options& w, int x) { w.groupby = x; });
    }
    return c;
  }

  // TFLMS search, then coordinate descent on simulated time.
  candidate tune_swap(const std::shared_ptr<const graph>& g) {
    candidate none = lean_none(g);
    if (none.r.fits) return none;
    candidate c = leanest_swap(g);
    if (!c.r.fits) return c;
    const int levels = c.p.lv.count();
    swap_options s = c.swap;
    int lo = 1, hi = levels;  // largest feasible threshold
    candidate best = c;
    while (lo < hi) {
      const int mid = lo + (hi - lo + 1) / 2;
      s.threshold = mid;
      auto m = eval(g, s);
      if (m.r.fits) {
        lo = mid;
        if (better(m, best)) best = std::move(m);
      } else {
        hi = mid - 1;
      }
    }
    const int tmax = lo;
    // The descent starts from the better of this and TFLMS's own answer, so it never ends worse.
    if (auto tf = tflms_swap(g); better(tf, best)) best = std::move(tf);
    const bool h2d_sync = best.swap.sync == sync_mode::h2d || best.swap.sync == sync_mode::both;
    const bool d2h_sync = best.swap.sync == sync_mode::d2h || best.swap.sync == sync_mode::both;
    for (int pass = 0; pass < 2; ++pass) {
      const candidate before = best;
      auto sweep = [&](auto setter, const std::vector<int>& values) {
        for (int v : values) {
          swap_options t = best.swap;
          setter(t, v);
          auto m = eval(g, t);
          if (better(m, best)) best = std::move(m);
        }
      };
      sweep([](swap_options& t, int v) { t.order = static_cast<schedule_order>(v); }, {0, 1});
      if (!h2d_sync) sweep([](swap_options& t, int v) { t.ahead = v; }, {1, 2, 3, 4, 6, 8, 12, 16, 24, -1});
      if (!h2d_sync) sweep([](swap_options& t, int v) { t.groupby = v; }, {0, 1, 2, 4, 8});
      if (!d2h_sync) sweep([](swap_options& t, int v) { t.swapout_delay = v; }, {0, 1, 2, 4, 8});
      {
        // Overlapped swap-outs for all but the largest tensors.
        std::vector<std::int64_t> sizes;
        for (const auto& ob : best.p.objects)
          if (ob.copy == 0 && ob.swap_out_step >= 0) sizes.push_back(ob.bytes);
        std::sort(sizes.begin(), sizes.end());
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
        const std::size_t ns = sizes.size();
        for (std::size_t q : {ns / 2, ns * 3 / 4, ns - 1, ns - 2})
          for (int d : {1, 2, 4, 8}) {
            if (q >= ns) continue;
            swap_options v = best.swap;
            if (v.sync == sync_mode::d2h) v.sync = sync_mode::none;
            if (v.sync == sync_mode::both) v.sync = sync_mode::h2d;
            v.swapout_delay = d;
            v.delay_max_bytes = sizes[q] - 1;
            auto cand = eval(g, v);
            if (better(cand, best)) best = std::move(cand);
          }
      }
      if (best.swap.sync != sync_mode::none) {
        // Async copies with just-in-time swap-ins for the largest tensors only.
        std::vector<std::int64_t> sizes;
        for (const auto& ob : best.p.objects)
          if (ob.copy > 0) sizes.push_back(ob.bytes);
        std::sort(sizes.begin(), sizes.end());
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
        const std::size_t ns = sizes.size();
        for (std::size_t q : {ns / 2, ns * 3 / 4, ns * 7 / 8, ns - 1, ns - 2, ns - 3}) {
          if (q >= ns) continue;
          for (int m = 0; m < static_cast<int>(best.swap.sync); ++m) {
            swap_options v = best.swap;
            v.sync = static_cast<sync_mode>(m);
            v.prefetch_max_bytes = sizes[q] - 1;
            auto cand = eval(g, v);
            if (better(cand, best)) best = std::move(cand);
          }
        }
      }
      std::vector<int> th;
      for (double f : {1.0, 0.85, 0.7, 0.5, 0.35, 0.2})
        th.push_back(std::max(1, static_cast<int>(std::lround(f * tmax))));
      sweep([](swap_options& t, int v) { t.threshold = v; }, th);
      // Looser sync modes may fit once the other parameters moved.
      for (int m = 0; m < static_cast<int>(best.swap.sync); ++m)
        sweep([](swap_options& t, int v) { t.sync = static_cast<sync_mode>(v); }, {m});
      if (before.r.step_seconds == best.r.step_seconds && before.r.fits == best.r.fits) break;
    }
    return best;
  }

  std::shared_ptr<const graph> with_units(const std::vector<int>& chosen) {
    if (chosen.empty()) return base_;
    return std::make_shared<const graph>(apply_recompute(*base_, units_, chosen));
  }

  std::vector<int> recomputable() const {
    std::vector<int> ids;
    for (const auto& u : units_)
      if (candidate_unit(u)) ids.push_back(u.id);
    return ids;
  }

  double unit_seconds(const unit& u) const {
    double t = 0;
    for (int f : u.recompute_ops) t += op_seconds(*base_, f, o_.device, o_.sim);
    return t;
  }

  const std::shared_ptr<const graph>& base() const { return base_; }
  const tune_options& options() const { return o_; }

 private:
  std::shared_ptr<const graph> base_;
  const tune_options& o_;
  std::vector<unit> units_;
};

struct outcome {
  candidate c;
  std::vector<int> chosen;
  unit_order order = unit_order::swapped_bytes;
};

outcome run_recompute(tuner& t) {
  std::vector<const unit*> us;
  for (const auto& u : t.units())
    if (t.candidate_unit(u)) us.push_back(&u);
  std::stable_sort(us.begin(), us.end(), [&](const unit* a, const unit* b) {
    return static_cast<double>(a->bytes) * t.unit_seconds(*b) > static_cast<double>(b->bytes) * t.unit_seconds(*a);
  });
  outcome out;
  out.c = t.lean_none(t.base());
  for (const unit* u : us) {
    if (out.c.r.fits) break;
    out.chosen.push_back(u->id);
    out.c = t.lean_none(t.with_units(out.chosen));
  }
  return out;
}

outcome run_hybrid(tuner& t, unit_order order, const candidate& swap_only) {
  const auto& o = t.options();
  // S(u): bytes of the unit's dropped tensors that the swap-only plan moves to the host.
  std::vector<char> swapped(t.base()->tensors.size(), 0);
  for (const auto& ob : swap_only.p.objects)
    if (ob.copy == 0 && ob.swap_out_step >= 0 && ob.tensor < static_cast<int>(swapped.size())) swapped[ob.tensor] = 1;
  struct scored {
    int id;
    double key;
  };
  std::vector<scored> us;
  for (const auto& u : t.units()) {
    if (!t.candidate_unit(u)) continue;
    double s = 0;
    for (int x : u.dropped)
      if (swapped[x]) s += static_cast<double>(t.base()->tensors[x].bytes);
    const double key = order == unit_order::swapped_bytes ? s : s / o.device.d2h_bandwidth - t.unit_seconds(u);
    if (order == unit_order::net_time && key <= 0) continue;
    if (order == unit_order::swapped_bytes && s <= 0 && swap_only.r.fits) continue;
    us.push_back({u.id, key});
  }
  std::stable_sort(us.begin(), us.end(), [](const scored& a, const scored& b) { return a.key > b.key; });

  outcome out;
  out.order = order;
  out.c = swap_only;
  // Greedy in adaptive chunks: a run of accepted units doubles the chunk, a rejected chunk is
  // halved and retried, a rejected single unit is skipped. Same decisions as unit-by-unit on long
  // accepted runs (the stem and first stage of a CNN) at a fraction of the simulations.
  std::size_t i = 0, chunk = 1;
  while (i < us.size()) {
    const std::size_t n = std::min(chunk, us.size() - i);
    auto chosen = out.chosen;
    for (std::size_t k = 0; k < n; ++k) chosen.push_back(us[i + k].id);
    auto g = t.with_units(chosen);
    candidate cand = t.eval_relaxed(g, out.c.swap);
    if (!cand.r.fits && !out.c.r.fits) cand = t.tune_swap(g);  // still searching for a first fit
    if (tuner::better(cand, out.c)) {
      out.c = std::move(cand);
      out.chosen = std::move(chosen);
      i += n;
      chunk *= 2;
    } else if (n > 1) {
      chunk = n / 2;
    } else {
      ++i;
    }
  }
  if (!out.chosen.empty()) {
    candidate re = t.tune_swap(t.with_units(out.chosen));
    if (tuner::better(re, out.c)) out.c = std::move(re);
  }
  return out;
}

[[noreturn]] void no_fit(const tuner& t, strategy s, std::int64_t peak, std::int64_t host_peak) {
  const auto& o = t.options();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const auto budget = static_cast<std::int64_t>(o.sim.memory_fraction * static_cast<double>(o.device.memory_bytes));
  if (peak <= budget && o.device.host_memory_bytes > 0 && host_peak > o.device.host_memory_bytes)
    throw error(errc::out_of_memory,
                fmt::format("host memory budget: strategy '{}' fits the device but its swapped tensors need {:.2f} GiB "
                            "of host memory, more than the {:.2f} GiB allowed on {}",
                            to_string(s), static_cast<double>(host_peak) / gib,
                            static_cast<double>(o.device.host_memory_bytes) / gib, o.device.name));
  // Bytes as well as GiB: rounded to two decimals, a peak 1 byte over the budget read as equal.
  throw error(errc::out_of_memory,
              fmt::format("memory budget: strategy '{}' has no plan within {} bytes ({:.3f} GiB, {:.0f}% of {:.2f} GiB "
                          "on {}); the leanest plan needs at least {} bytes ({:.3f} GiB), {} bytes more",
                          to_string(s), budget, static_cast<double>(budget) / gib, 100 * o.sim.memory_fraction,
                          static_cast<double>(o.device.memory_bytes) / gib, o.device.name, peak,
                          static_cast<double>(peak) / gib, peak - budget));
}

// The leanest plans of a strategy: the smallest device peak among them, and whether one of them also
// meets the host budget (sim_result::fits checks both).
struct lean_summary {
  std::int64_t peak = INT64_MAX;
  bool any_fits = false;
};

lean_summary leanest_plans(tuner& t, strategy s) {
  lean_summary out;
  auto see = [&](const candidate& c) {
    out.peak = std::min(out.peak, c.r.peak_bytes);
    out.any_fits = out.any_fits || c.r.fits;
  };
  see(t.lean_none(t.base()));
  if (s == strategy::none) return out;
  if (s == strategy::swap || s == strategy::hybrid || s == strategy::automatic) see(t.leanest_swap(t.base()));
  const auto all = t.recomputable();
  if (!all.empty() && s != strategy::swap) {
    auto g = t.with_units(all);
    see(t.lean_none(g));
    if (s != strategy::recompute) see(t.leanest_swap(g));
  }
  return out;
}

std::int64_t leanest(tuner& t, strategy s) { return leanest_plans(t, s).peak; }

}  // namespace

tuned_plan tune(const graph& training, strategy s, const tune_options& options) {
  validate(options.device);
  const auto t0 = std::chrono::steady_clock::now();
  tuner t(training, options);
  outcome best;
  strategy chosen = s;
  auto consider = [&](outcome o, strategy k) {
    if (tuner::better(o.c, best.c)) {
      best = std::move(o);
      chosen = k;
    }
  };
  switch (s) {
    case strategy::none:
      best.c = t.lean_none(t.base());
      break;
    case strategy::swap:
      best.c = options.tflms_search ? t.tflms_swap(t.base()) : t.tune_swap(t.base());
      break;
    case strategy::recompute:
      best = run_recompute(t);
      break;
    case strategy::hybrid:
    case strategy::automatic: {
      candidate swap_only = t.tune_swap(t.base());
      chosen = swap_only.swap.threshold == swap_options::off ? strategy::none : strategy::swap;
      best.c = swap_only;
      if (s == strategy::hybrid || !swap_only.r.fits || swap_only.swap.threshold != swap_options::off) {
        consider(run_hybrid(t, unit_order::swapped_bytes, swap_only), strategy::hybrid);
        if (options.both_orders) consider(run_hybrid(t, unit_order::net_time, swap_only), strategy::hybrid);
      }
      // Recompute alone is a hybrid without swaps; on slow links it is often the best one.
      if (!(best.c.r.fits && best.c.swap.threshold == swap_options::off && best.chosen.empty()))
        consider(run_recompute(t), strategy::recompute);
      if (s == strategy::hybrid) chosen = strategy::hybrid;
      break;
    }
  }
  if (!best.c.r.fits) {
    // The TFLMS baseline's leanest plan is its own (level order), not toru's.
    no_fit(t, s, s == strategy::swap && options.tflms_search ? best.c.r.peak_bytes : leanest(t, s),
           best.c.r.host_peak_bytes);
  }
  tuned_plan out;
  out.requested = s;
  out.chosen = chosen;
  if (out.chosen == strategy::hybrid && best.chosen.empty())
    out.chosen = best.c.swap.threshold == swap_options::off ? strategy::none : strategy::swap;
  if (out.chosen == strategy::recompute && best.chosen.empty()) out.chosen = strategy::none;
  if (s == strategy::hybrid) out.chosen = strategy::hybrid;
  out.order = best.order;
  out.recompute_units = best.chosen;
  out.p = std::move(best.c.p);
  out.p.recomputed_units = out.recompute_units;
  out.result = std::move(best.c.r);
  out.evaluations = t.evaluations;
  if (options.sim.record_trace) out.result = simulate(out.p, options.device, options.sim);
  out.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

bool fits(const graph& training, strategy s, const tune_options& options) {
  validate(options.device);
  tuner t(training, options);
  const auto lean = leanest_plans(t, s);
  if (lean.any_fits) return true;
  const auto budget =
      static_cast<std::int64_t>(options.sim.memory_fraction * static_cast<double>(options.device.memory_bytes));
  if (lean.peak > budget || options.device.host_memory_bytes == 0) return false;
  // The leanest device plans swap the most and overflow the host budget; a plan that swaps less (a
  // larger threshold, more recomputation) may meet both. The full search decides, as tune() would.
  try {
    tune(training, s, options);
    return true;
  } catch (const error& e) {
    if (e.code() != errc::out_of_memory) throw;
    return false;
  }
}

std::int64_t leanest_peak(const graph& training, strategy s, const tune_options& options) {
  validate(options.device);
  tuner t(training, options);
  return leanest(t, s);
}

std::int64_t largest_fitting(const std::function<graph(std::int64_t)>& make, strategy s, const tune_options& options,
                             std::int64_t limit) {
  auto ok = [&](std::int64_t n) { return fits(make(n), s, options); };
  if (!ok(1)) return 0;
  std::int64_t lo = 1, hi = 2;
  while (hi <= limit && ok(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > limit) return lo;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (ok(mid))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace toru::swap
