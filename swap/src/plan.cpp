// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/plan.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::swap {
namespace {

// Successor lists in one flat array (compressed rows): planning builds them for every candidate,
// and a vector per op made the allocator the hot spot.
struct adjacency {
  std::vector<int> offset, target;
  struct range {
    const int *b, *e;
    const int* begin() const { return b; }
    const int* end() const { return e; }
  };
  range operator[](int i) const { return {target.data() + offset[i], target.data() + offset[i + 1]}; }
};

adjacency successors(const graph& g) {
  const int n = static_cast<int>(g.ops.size());
  adjacency a;
  a.offset.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    for (int t : g.ops[i].inputs)
      if (g.tensors[t].producer >= 0) ++a.offset[g.tensors[t].producer + 1];
    for (int c : g.ops[i].control_inputs) ++a.offset[c + 1];
  }
  for (int i = 0; i < n; ++i) a.offset[i + 1] += a.offset[i];
  a.target.resize(a.offset[n]);
  std::vector<int> fill(a.offset.begin(), a.offset.end() - 1);
  for (int i = 0; i < n; ++i) {
    for (int t : g.ops[i].inputs)
      if (g.tensors[t].producer >= 0) a.target[fill[g.tensors[t].producer]++] = i;
    for (int c : g.ops[i].control_inputs) a.target[fill[c]++] = i;
  }
  return a;
}

// Recomputed tensors are never swapped: they exist to avoid the transfer.
bool swappable(const graph& g, const tensor& t) {
  return t.producer >= 0 && t.shape.size() > 1 &&
         (t.kind == tensor_kind::activation || t.kind == tensor_kind::gradient) &&
         g.ops[t.producer].cat != category::recompute;
}

}  // namespace

static levels levels_from(const graph& g, const adjacency& succ) {
  const int n = static_cast<int>(g.ops.size());
  std::vector<int> indeg(n, 0);
  for (int i = 0; i < n; ++i)
    for (int j : succ[i]) ++indeg[j];
  levels l;
  l.level.assign(n, 0);
  std::vector<int> queue;
  queue.reserve(n);
  for (int i = 0; i < n; ++i)
    if (indeg[i] == 0) queue.push_back(i);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int u = queue[head];
    for (int v : succ[u]) {
      l.level[v] = std::max(l.level[v], l.level[u] + 1);
      if (--indeg[v] == 0) queue.push_back(v);
    }
  }
  if (static_cast<int>(queue.size()) != n)
    throw error(errc::invalid_argument, fmt::format("graph '{}': expected an acyclic graph, {} of {} ops lie on cycles",
                                                    g.name, n - static_cast<int>(queue.size()), n));
  int maxl = -1;
  for (int v : l.level) maxl = std::max(maxl, v);
  l.by_level.resize(maxl + 1);
  for (int i = 0; i < n; ++i) l.by_level[l.level[i]].push_back(i);
  return l;
}

levels topo_levels(const graph& g) { return levels_from(g, successors(g)); }

std::vector<unit> find_units(const graph& g, int max_units, bool fine) {
  std::vector<int> fwd;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i)
    if (g.ops[i].cat == category::forward) fwd.push_back(i);
  std::vector<int> unit_of(g.ops.size(), -1);
  // From the graph's structure only (never the builders' block annotations), so a model gives the
  // same units whether built or imported: cuts of the forward order where exactly one activation
  // crosses (the articulation points of a residual or Inception network: block boundaries), merged
  // to at least `target` ops; `fine` cuts after every activation (and single-tensor pooling) instead.
  std::vector<int> pos(g.ops.size(), -1);
  for (int i = 0; i < static_cast<int>(fwd.size()); ++i) pos[fwd[i]] = i;
  std::vector<int> crossing(fwd.size() + 1, 0);
  for (const auto& t : g.tensors) {
    if (t.producer < 0 || pos[t.producer] < 0) continue;
    int last = pos[t.producer];
    for (int c : t.consumers)
      if (pos[c] >= 0) last = std::max(last, pos[c]);
    ++crossing[pos[t.producer]];
    --crossing[last];
  }
  std::partial_sum(crossing.begin(), crossing.end(), crossing.begin());
  // At least 4 ops per unit: a unit of one op has nothing inside to drop.
  const int target = std::max<int>(4, static_cast<int>(fwd.size()) / std::max(1, max_units));
  auto activation = [](const std::string& t) { return t == "relu" || t == "gelu" || t == "clip"; };
  auto pooling = [](const std::string& t) { return t == "maxpool" || t == "avgpool"; };
  int id = 0, size = 0;
  const int nf = static_cast<int>(fwd.size());
  for (int i = 0; i < nf; ++i) {
    unit_of[fwd[i]] = id;
    ++size;
    const auto& type = g.ops[fwd[i]].type;
    // Of a residual add and the activation after it, or a conv and its batch norm (all single-tensor
    // cuts), cut after the latter: a conv-bn-relu stays in one unit.
    const bool act_next = i + 1 < nf && (activation(g.ops[fwd[i + 1]].type) || g.ops[fwd[i + 1]].type == "batchnorm");
    const bool cut = fine ? activation(type) || (crossing[i] == 1 && pooling(type))
                          : crossing[i] == 1 && size >= target && !act_next;
    if (cut && i + 1 < nf) {
      ++id;
      size = 0;
    }
  }
  // A tail shorter than a unit (the loss) joins the unit before it.
  if (!fine && id > 0 && size > 0 && size < target)
    for (int i = nf - size; i < nf; ++i) unit_of[fwd[i]] = id - 1;
  int nunits = 0;
  for (int f : fwd) nunits = std::max(nunits, unit_of[f] + 1);
  std::vector<unit> units(nunits);
  for (int u = 0; u < nunits; ++u) units[u].id = u;
  for (int f : fwd) units[unit_of[f]].ops.push_back(f);

  auto inside = [&](int op, int u) { return op >= 0 && unit_of[op] == u; };
  std::vector<int> backward_of(g.ops.size(), -1);
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i)
    if (g.ops[i].cat == category::backward && g.ops[i].forward_op >= 0 && g.ops[i].type != "add_n")
      backward_of[g.ops[i].forward_op] = i;
  const auto succ = successors(g);
  std::vector<char> reached(g.ops.size());
  for (auto& u : units) {
    if (u.ops.empty()) continue;
    std::vector<int> outputs;
    for (int f : u.ops)
      for (int t : g.ops[f].outputs) {
        const auto& tt = g.tensors[t];
        bool external = false, backward = false;
        for (int c : tt.consumers) {
          if (g.ops[c].cat == category::forward && !inside(c, u.id)) external = true;
          if (g.ops[c].cat == category::backward) backward = true;
        }
        if (external)
          outputs.push_back(t);
        else if (backward && tt.kind == tensor_kind::activation && g.ops[f].type != "loss")
          u.dropped.push_back(t);
      }
    // Triggers: the backward ops that deliver gradient from *outside* the unit (an output's
    // accumulated gradient may also include the unit's own contributions, which would be a cycle).
    for (int o : outputs)
      for (int c : g.tensors[o].consumers) {
        if (g.ops[c].cat != category::forward || inside(c, u.id)) continue;
        int from = backward_of[c];
        if (g.ops[c].grad_passthrough) {
          const int gr = g.tensors[g.ops[c].outputs.at(0)].grad;
          from = gr >= 0 ? g.tensors[gr].producer : -1;
        }
        if (from >= 0) u.triggers.push_back(from);
      }
    std::sort(u.triggers.begin(), u.triggers.end());
    u.triggers.erase(std::unique(u.triggers.begin(), u.triggers.end()), u.triggers.end());
    if (u.triggers.empty()) {  // the loss unit: nothing runs between its forward and its backward
      u.dropped.clear();
      continue;
    }
    // Ops to re-run: producers of dropped tensors and, transitively, of unit-internal inputs.
    std::vector<char> need(g.ops.size(), 0);
    std::vector<int> stack;
    for (int t : u.dropped) stack.push_back(g.tensors[t].producer);
    while (!stack.empty()) {
      const int f = stack.back();
      stack.pop_back();
      if (need[f]) continue;
      need[f] = 1;
      for (int x : g.ops[f].inputs) {
        const int p = g.tensors[x].producer;
        if (!inside(p, u.id)) continue;
        if (std::find(outputs.begin(), outputs.end(), x) != outputs.end()) continue;  // a kept checkpoint
        stack.push_back(p);
      }
    }
    for (int f : u.ops)
      if (need[f]) {
        u.recompute_ops.push_back(f);
        u.flops += g.ops[f].flops;
      }
    // Guard: no trigger may depend on a backward reader of a dropped tensor (it would wait on the
    // recomputation it triggers).
    std::fill(reached.begin(), reached.end(), 0);
    std::vector<int> work;
    for (int t : u.dropped)
      for (int c : g.tensors[t].consumers)
        if (g.ops[c].cat == category::backward) work.push_back(c);
    while (!work.empty()) {
      const int v = work.back();
      work.pop_back();
      if (reached[v]) continue;
      reached[v] = 1;
      for (int w : succ[v]) work.push_back(w);
    }
    if (std::any_of(u.triggers.begin(), u.triggers.end(), [&](int tr) { return reached[tr] != 0; })) {
      u.dropped.clear();
      u.recompute_ops.clear();
      u.flops = 0;
      continue;
    }
    for (int t : u.dropped) u.bytes += g.tensors[t].bytes;
  }
  std::erase_if(units, [](const unit& u) { return u.ops.empty(); });
  return units;
}

graph apply_recompute(const graph& training, const std::vector<unit>& units, const std::vector<int>& chosen) {
  graph g = training;
  for (int uid : chosen) {
    const auto it = std::find_if(units.begin(), units.end(), [&](const unit& u) { return u.id == uid; });
    if (it == units.end())
      throw error(errc::invalid_argument, fmt::format("recompute unit: expected an id from find_units, got {}", uid));
    const unit& u = *it;
    if (u.dropped.empty()) continue;
    std::vector<int> clone(g.tensors.size(), -1);
    for (int f : u.recompute_ops) {
      const op fo = g.ops[f];
      op c;
      c.name = "recompute/" + fo.name;
      c.type = fo.type;
      c.cat = category::recompute;
      c.forward_op = f;
      c.flops = fo.flops;
      c.bytes_touched = fo.bytes_touched;
      c.control_inputs = u.triggers;
      for (int x : fo.inputs) c.inputs.push_back(clone[x] >= 0 ? clone[x] : x);
      for (int y : fo.outputs) {
        const tensor yt = g.tensors[y];  // a copy: add_tensor may reallocate
        const int ct = g.add_tensor(yt.name + "@recompute", yt.shape, yt.type, tensor_kind::activation);
        // The original's byte count, which an executor may have set to its real storage (padding).
        g.tensors[ct].bytes = yt.bytes;
        clone.resize(g.tensors.size(), -1);
        clone[y] = ct;
        c.outputs.push_back(ct);
      }
      g.add_op(std::move(c));
    }
    for (int t : u.dropped) {
      const int ct = clone[t];
      auto& consumers = g.tensors[t].consumers;
      std::vector<int> keep;
      for (int c : consumers) {
        if (g.ops[c].cat != category::backward) {
          keep.push_back(c);
          continue;
        }
        for (int& x : g.ops[c].inputs)
          if (x == t) x = ct;
        g.tensors[ct].consumers.push_back(c);
      }
      consumers = std::move(keep);
    }
  }
  return g;
}

plan make_plan(std::shared_ptr<const graph> training, const swap_options& options) {
  if (options.threshold < 0)
    throw error(errc::invalid_argument, fmt::format("swapout_threshold: expected >= 0, got {}", options.threshold));
  if (options.groupby < 0)
    throw error(errc::invalid_argument, fmt::format("swapin_groupby: expected >= 0, got {}", options.groupby));
  if (options.swapout_delay < 0)
    throw error(errc::invalid_argument, fmt::format("swapout_delay: expected >= 0, got {}", options.swapout_delay));
  plan p;
  p.options = options;
  if (!options.serialize_levels.empty()) {
    auto copy = std::make_shared<graph>(*training);
    graph& g = *copy;
    const levels pre = topo_levels(g);
    for (int lv : options.serialize_levels) {
      if (lv < 0 || lv >= pre.count())
        throw error(errc::invalid_argument,
                    fmt::format("serialization level: expected 0..{}, got {}", pre.count() - 1, lv));
      const auto& ops = pre.by_level[lv];
      for (std::size_t i = 1; i < ops.size(); ++i) g.ops[ops[i]].control_inputs.push_back(ops[i - 1]);
    }
    training = std::move(copy);
  }
  p.g = std::move(training);
  const graph& g = *p.g;
  const auto succ = successors(g);
  p.lv = levels_from(g, succ);
  const auto& level = p.lv.level;
  const int n = static_cast<int>(g.ops.size());
  p.order.resize(n);
  std::iota(p.order.begin(), p.order.end(), 0);
  std::stable_sort(p.order.begin(), p.order.end(), [&](int a, int b) { return level[a] < level[b]; });
  if (options.order == schedule_order::depth_first) {
    std::vector<int> indeg(n, 0), stack;
    for (int i = 0; i < n; ++i)
      for (int j : succ[i]) ++indeg[j];
    for (int i = n - 1; i >= 0; --i)
      if (indeg[i] == 0) stack.push_back(i);
    p.order.clear();
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      p.order.push_back(u);
      const auto next = succ[u];
      for (const int* it = next.end(); it != next.begin();)
        if (--indeg[*--it] == 0) stack.push_back(*it);
    }
  }
  std::vector<int> pos(n);
  for (int i = 0; i < n; ++i) pos[p.order[i]] = i;

  // Reachability along edges, pruned at dest's level (levels strictly increase along edges).
  std::vector<int> stamp(n, 0);
  int generation = 0;
  std::vector<int> stack;
  auto reaches = [&](int from, int dest) {
    ++generation;
    stack.assign(1, from);
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (int v : succ[u]) {
        if (v == dest) return true;
        if (level[v] >= level[dest] || stamp[v] == generation) continue;
        stamp[v] = generation;
        stack.push_back(v);
      }
    }
    return false;
  };

  struct group {
    int tensor;
    std::vector<int> consumers;
    int dest;
    int trigger = -1;
  };
  std::vector<group> groups;
  std::vector<int> first_group(g.tensors.size(), -1), group_count(g.tensors.size(), 0);
  if (options.threshold != swap_options::off) {
    std::vector<int> far;
    for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
      const auto& tt = g.tensors[t];
      if (!swappable(g, tt)) continue;
      const int lp = level[tt.producer];
      far.clear();
      for (int c : tt.consumers)
        if (level[c] - lp > options.threshold) far.push_back(c);
      if (far.empty()) continue;
      std::sort(far.begin(), far.end(), [&](int a, int b) { return pos[a] < pos[b]; });
      far.erase(std::unique(far.begin(), far.end()), far.end());
      first_group[t] = static_cast<int>(groups.size());
      group cur{t, {far[0]}, far[0]};
      for (std::size_t i = 1; i < far.size(); ++i) {
        if (level[far[i]] - level[cur.consumers.back()] <= options.groupby) {
          cur.consumers.push_back(far[i]);
        } else {
          groups.push_back(std::move(cur));
          cur = group{t, {far[i]}, far[i]};
        }
      }
      groups.push_back(std::move(cur));
      group_count[t] = static_cast<int>(groups.size()) - first_group[t];
    }
  }

  // TFLMS _sync_h2d triggers the swap-in from dest's other fan-ins. In a serialized program the
  // latest point that still precedes dest is the op just before it, which is never earlier than the
  // last fan-in and holds the copy for less time, so that is the just-in-time trigger here.
  auto just_in_time = [&](const group& gr) { return p.order[pos[gr.dest] - 1]; };
  auto search_by_level = [&](int src, int dest, int k) {
    const int lo = std::max(level[dest] - k - 10, level[src] + 1);
    for (int lv = level[dest] - k - 1; lv >= lo; --lv)
      for (int cand : p.lv.by_level[lv])
        if (reaches(cand, dest)) return cand;
    return -1;
  };
  const bool sync_h2d = options.sync == sync_mode::h2d || options.sync == sync_mode::both;
  std::vector<int> ahead(groups.size(), options.ahead);
  if (options.ahead < 0 && !sync_h2d) {
    std::vector<int> idx(groups.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int a, int b) { return level[groups[a].dest] < level[groups[b].dest]; });
    int current = -1, current_ahead = 3;
    for (int i : idx) {
      const int ld = level[groups[i].dest];
      if (ld != current) {
        if (current >= 0) current_ahead = ld - current;
        current = ld;
      }
      ahead[i] = current_ahead;
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    auto& gr = groups[i];
    const int src = g.tensors[gr.tensor].producer;
    const bool jit = sync_h2d || g.tensors[gr.tensor].bytes > options.prefetch_max_bytes;
    int trig = jit ? -1 : search_by_level(src, gr.dest, ahead[i]);
    if (trig < 0) trig = just_in_time(gr);
    if (pos[trig] < pos[src]) trig = src;
    gr.trigger = trig;
  }

  // Device objects: copy 0 of every non-parameter tensor, one per swap-in group.
  std::vector<int> original(g.tensors.size(), -1);
  p.objects.reserve(g.tensors.size() + groups.size());
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const auto& tt = g.tensors[t];
    if (tt.kind == tensor_kind::parameter) continue;
    if (tt.kind == tensor_kind::param_gradient && g.persistent_param_grads) continue;  // simulate() counts them
    if (tt.producer < 0 && tt.kind != tensor_kind::input) continue;
    original[t] = static_cast<int>(p.objects.size());
    p.objects.push_back({t, 0, tt.bytes});
  }
  std::vector<int> group_object(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    group_object[i] = static_cast<int>(p.objects.size());
    const int t = groups[i].tensor;
    p.objects.push_back({t, static_cast<int>(i) - first_group[t] + 1, g.tensors[t].bytes, -1, -1, -1, original[t]});
  }
  // Which object each op input reads, and each object's last reader (position).
  std::vector<int> last(p.objects.size(), -1);
  p.input_objects.offset.assign(n + 1, 0);
  for (int o = 0; o < n; ++o)
    p.input_objects.offset[o + 1] = p.input_objects.offset[o] + static_cast<int>(g.ops[o].inputs.size());
  p.input_objects.item.clear();
  p.input_objects.item.reserve(p.input_objects.offset[n]);
  for (int o = 0; o < n; ++o) {
    for (int t : g.ops[o].inputs) {
      int obj = original[t];
      if (first_group[t] >= 0)
        for (int k = first_group[t]; k < first_group[t] + group_count[t]; ++k)
          if (std::find(groups[k].consumers.begin(), groups[k].consumers.end(), o) != groups[k].consumers.end())
            obj = group_object[k];
      p.input_objects.item.push_back(obj);
      if (obj >= 0) last[obj] = std::max(last[obj], pos[o]);
    }
  }
  const bool sync_d2h = options.sync == sync_mode::d2h || options.sync == sync_mode::both;
  const int delay = sync_d2h ? 0 : options.swapout_delay;
  std::vector<int> free_pos(p.objects.size());
  for (std::size_t k = 0; k < p.objects.size(); ++k) {
    const auto& ob = p.objects[k];
    const int prod = g.tensors[ob.tensor].producer;
    int f = last[k];
    if (ob.copy == 0) {
      if (prod >= 0) f = std::max(f, pos[prod]);
      if (first_group[ob.tensor] >= 0)
        f = std::max(f, std::min(n - 1, pos[prod] + (ob.bytes > options.delay_max_bytes ? 0 : delay)));
    }
    free_pos[k] = std::max(f, 0);
  }
  // Items bucketed by position (counting sort, stable).
  auto bucket = [n](std::size_t count, auto key) {
    adjacency b;
    b.offset.assign(n + 1, 0);
    for (std::size_t k = 0; k < count; ++k) ++b.offset[key(k) + 1];
    for (int i = 0; i < n; ++i) b.offset[i + 1] += b.offset[i];
    b.target.resize(count);
    std::vector<int> fill(b.offset.begin(), b.offset.end() - 1);
    for (std::size_t k = 0; k < count; ++k) b.target[fill[key(k)]++] = static_cast<int>(k);
    return b;
  };
  const adjacency frees_at = bucket(p.objects.size(), [&](std::size_t k) { return free_pos[k]; });
  const adjacency swapins_at = bucket(groups.size(), [&](std::size_t i) { return pos[groups[i].trigger]; });

  // In-place ops: the input whose storage the output takes over is released just before the op.
  auto in_place_type = [](const std::string& t) {
    return t == "relu" || t == "add" || t == "add_n" || t == "relu_grad";
  };
  std::vector<char> released_early(p.objects.size(), 0);
  p.steps.reserve(static_cast<std::size_t>(n) * 2 + 2 * groups.size());
  for (int i = 0; i < n; ++i) {
    const int o = p.order[i];
    const auto& op_o = g.ops[o];
    if (options.in_place && !op_o.outputs.empty() && original[op_o.outputs[0]] >= 0 && in_place_type(op_o.type)) {
      const std::int64_t out_bytes = g.tensors[op_o.outputs[0]].bytes;
      for (int k : p.input_objects[o]) {
        if (k < 0 || released_early[k]) continue;
        const auto& ob = p.objects[k];
        if (ob.bytes != out_bytes || free_pos[k] != i || ob.alloc_step < 0) continue;
        if (ob.copy == 0 && first_group[ob.tensor] >= 0) continue;  // swapped out: its release is a fence
        released_early[k] = 1;
        p.objects[k].free_step = static_cast<int>(p.steps.size());
        p.steps.push_back({step_kind::free, -1, k, false, true});
        break;
      }
    }
    const int at = static_cast<int>(p.steps.size());
    p.steps.push_back({step_kind::compute, o});
    for (int t : g.ops[o].outputs)
      if (original[t] >= 0) p.objects[original[t]].alloc_step = at;
    for (int t : g.ops[o].outputs)
      if (first_group[t] >= 0) {
        p.objects[original[t]].swap_out_step = static_cast<int>(p.steps.size());
        p.steps.push_back({step_kind::swap_out, -1, original[t]});
      }
    for (int k : frees_at[i]) {
      if (released_early[k]) continue;
      p.objects[k].free_step = static_cast<int>(p.steps.size());
      const bool fence = p.objects[k].copy == 0 && first_group[p.objects[k].tensor] >= 0;
      p.steps.push_back({step_kind::free, -1, k, fence});
    }
    for (int gi : swapins_at[i]) {
      p.objects[group_object[gi]].alloc_step = static_cast<int>(p.steps.size());
      p.steps.push_back({step_kind::swap_in, -1, group_object[gi]});
    }
  }
  return p;
}

replay replay_memory(const plan& p) {
  replay r;
  const std::size_t ns = p.steps.size();
  std::vector<std::int64_t> delta(ns + 1, 0), host(ns + 1, 0);
  std::vector<int> last_swapin(p.g->tensors.size(), -1);
  for (const auto& ob : p.objects) {
    if (ob.alloc_step < 0)
      r.initial += ob.bytes;
    else
      delta[ob.alloc_step] += ob.bytes;
    if (ob.free_step >= 0) delta[ob.free_step] -= ob.bytes;
    if (ob.copy > 0) last_swapin[ob.tensor] = std::max(last_swapin[ob.tensor], ob.alloc_step);
  }
  for (const auto& ob : p.objects)
    if (ob.copy == 0 && ob.swap_out_step >= 0) {
      host[ob.swap_out_step] += ob.bytes;
      host[std::max(last_swapin[ob.tensor], ob.swap_out_step)] -= ob.bytes;
    }
  r.in_use.resize(ns);
  std::int64_t cur = r.initial, hcur = 0;
  r.peak = cur;
  for (std::size_t s = 0; s < ns; ++s) {
    // Peak at the allocating step, before the same step's frees could offset it.
    if (delta[s] > 0 && cur + delta[s] > r.peak) {
      r.peak = cur + delta[s];
      r.peak_step = static_cast<int>(s);
    }
    cur += delta[s];
    r.in_use[s] = cur;
    hcur += host[s];
    r.host_peak = std::max(r.host_peak, hcur);
  }
  return r;
}

}  // namespace toru::swap
