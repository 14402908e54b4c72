// SPDX-License-Identifier: BSD-3-Clause
// The CGDP engine on host memory: node-shared window, helper threads, host sum and update.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "cgdp_binding.hpp"
#include "cgdp_device.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"
#include "toru/core/mpi.hpp"
#include "toru/train/cgdp.hpp"
#include "toru/train/host_sum.hpp"

namespace toru::train {

namespace {

using counter = std::atomic<std::int64_t>;
static_assert(counter::is_always_lock_free, "the window's counters are shared between processes");
constexpr std::size_t counter_stride = 64 / sizeof(counter);  // one cache line each: no false sharing

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Waits for `ready()`: a short spin, then yields, then sleeps, so that waiting helpers leave the
// cores to the workers on oversubscribed nodes. Throws what `failed()` reports.
template <class Ready, class Failed>
void wait_until(Ready ready, Failed failed) {
  for (int i = 0; !ready(); ++i) {
    failed();
    if (i < 64)
      continue;
    else if (i < 256)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::uint64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

struct cgdp::impl {
  MPI_Comm node = MPI_COMM_NULL, cross = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  counter* ready = nullptr;  // [chunk][local rank]: steps posted
  counter* done = nullptr;   // [chunk][local rank]: steps whose range the helper finished
  float* avg = nullptr;      // [S] averaged gradient
  float* master = nullptr;   // [S] master weights (cgdp)
  float* grads = nullptr;    // [local rank][S] the workers' gradients
  std::int64_t extent = 0;   // S
  std::vector<std::pair<std::int64_t, std::int64_t>> range;  // per chunk: this helper's [lo, hi)
  std::vector<optimizer> host_opt;                           // per chunk: this helper's range (cgdp)
  std::vector<optimizer> worker_opt;                         // per chunk: whole chunk (cgdp-sum)
  std::atomic<double> lr{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;        // written by the helper before `failed`
  std::vector<double> host_seconds;  // per chunk, written by the helper before `done`
  std::vector<float> node_sums;      // several nodes: the allgathered node sums of one range
  int nranks = 1, nodes = 1;
  std::thread helper;
  std::unique_ptr<detail::cgdp_device> dev;  // memory_space::device

  counter& at(counter* base, std::size_t c, int r, int local_size) {
    return base[(c * static_cast<std::size_t>(local_size) + static_cast<std::size_t>(r)) * counter_stride];
  }
};

cgdp::cgdp(const comm::communicator& comm, std::span<const parameter_slot> slots, memory_space space,
           std::span<const float> params, const optimizer_options& opt, const cgdp_options& options)
    : options_(options), slots_(slots.begin(), slots.end()), impl_(std::make_unique<impl>()) {
  MPI_Comm parent = comm.mpi();
  int rank = 0;
  check_mpi(MPI_Comm_rank(parent, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(parent, &nranks_), "MPI_Comm_size");
  impl_->nranks = nranks_;
  std::string layout;
  for (const auto& s : slots_) layout += fmt::format("{}:{}:{};", s.name, s.offset, s.count);

  // This rank's own proposal is checked first (a bad one is every rank's error); the layout in
  // use is then rank 0's.
  std::vector<int> proposal;
  validate_collectively(
      parent, "toru::train::cgdp",
      {same_text("parameter slots", layout),
       {"host update", options.host_update},
       {"ranks per node", options.ranks_per_node},
       {"memory space", static_cast<std::int64_t>(space)}},
      [&] {
        if (space == memory_space::device) {
          if (!options.host_update)
            throw error(errc::unsupported,
                        "cgdp-sum: the workers' update runs on host buffers; with a device model use cgdp (the "
                        "host updates)");
          impl_->dev = detail::make_cgdp_device(0, options.compute_stream);  // every rank: a GPU?
        }
        expect(options.ranks_per_node >= 0, "ranks_per_node", ">= 0", std::to_string(options.ranks_per_node));
        validate(opt);
        layers_ = group_layers(slots_);
        proposal = options.chunk_sizes.empty()
                       ? uniform_chunking(static_cast<int>(layers_.size()), options.chunk_layers)
                       : options.chunk_sizes;
        make_chunks(layers_, proposal);  // validates
        std::int64_t extent = 0;
        for (const auto& s : slots_) extent = std::max(extent, s.offset + s.count);
        expect(static_cast<std::int64_t>(params.size()) >= extent, "params", fmt::format("at least {} floats", extent),
               std::to_string(params.size()));
      });

  // Rank 0's chunking, broadcast and checked.
  int nsizes = static_cast<int>(proposal.size());
  check_mpi(MPI_Bcast(&nsizes, 1, MPI_INT, 0, parent), "MPI_Bcast");
  sizes_ = proposal;
  sizes_.resize(static_cast<std::size_t>(nsizes));
  check_mpi(MPI_Bcast(sizes_.data(), nsizes, MPI_INT, 0, parent), "MPI_Bcast");
  overruled_ = sizes_ != proposal;
  chunks_ = make_chunks(layers_, sizes_);
  validate_collectively(parent, "toru::train::cgdp chunking", {same_text("chunking", describe_chunking(sizes_))},
                        [] {});

  // Nodes.
  if (options.ranks_per_node > 0)
    check_mpi(MPI_Comm_split(parent, rank / options.ranks_per_node, rank, &impl_->node), "MPI_Comm_split");
  else
    check_mpi(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &impl_->node),
              "MPI_Comm_split_type");
  check_mpi(MPI_Comm_rank(impl_->node, &local_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(impl_->node, &local_size_), "MPI_Comm_size");
  int leaders = local_rank_ == 0 ? 1 : 0, max_local = local_size_, min_local = local_size_;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, parent), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &max_local, 1, MPI_INT, MPI_MAX, parent), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &min_local, 1, MPI_INT, MPI_MIN, parent), "MPI_Allreduce");
  nodes_ = leaders;
  impl_->nodes = nodes_;

  std::int64_t extent = 0;
  for (const auto& s : slots_) extent = std::max(extent, s.offset + s.count);
  impl_->extent = extent;
  const std::size_t nchunks = chunks_.size();
  const std::size_t ctrl_bytes = 2 * nchunks * static_cast<std::size_t>(local_size_) * counter_stride * sizeof(counter);
  const std::size_t floats = static_cast<std::size_t>(extent) * (2 + static_cast<std::size_t>(local_size_));
  const std::uint64_t window_bytes = ctrl_bytes + floats * sizeof(float);
  const std::uint64_t state_words = opt.kind == optimizer_kind::sgd ? 0 : opt.kind == optimizer_kind::momentum ? 1 : 2;
  const std::uint64_t state_bytes = options.host_update ? state_words * static_cast<std::uint64_t>(extent) * 4 : 0;
  int thread_level = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&thread_level), "MPI_Query_thread");
  validate_collectively(parent, "toru::train::cgdp resources", {}, [&] {
    if (min_local != max_local)
      throw error(errc::unsupported, fmt::format("cgdp: every node needs as many ranks (helpers own equal ranges "
                                                 "across nodes); nodes have {} to {} ranks",
                                                 min_local, max_local));
    if (nodes_ > 1 && thread_level < MPI_THREAD_MULTIPLE)
      throw error(errc::unsupported,
                  "cgdp: several nodes need MPI_THREAD_MULTIPLE (helper threads reduce across "
                  "nodes); MPI was initialised with less");
    const std::uint64_t need = window_bytes + state_bytes;
    const std::uint64_t have = options.host_memory_bytes > 0 ? options.host_memory_bytes : mem_available_bytes();
    if (have > 0 && need > have)
      throw error(errc::out_of_memory,
                  fmt::format("cgdp: host memory too small: this node needs {} (master weights {}, optimizer state "
                              "{}, averaged gradient {}, gradient window {} for {} ranks), {} available{}",
                              mib(need), mib(static_cast<std::uint64_t>(extent) * 4), mib(state_bytes),
                              mib(static_cast<std::uint64_t>(extent) * 4),
                              mib(static_cast<std::uint64_t>(extent) * 4 * static_cast<std::uint64_t>(local_size_)),
                              local_size_, mib(have), options.host_memory_bytes > 0 ? " (the given budget)" : ""));
  });

  // The window: local rank 0 allocates it all (one contiguous block the helpers index freely).
  void* base = nullptr;
  check_mpi(MPI_Win_allocate_shared(local_rank_ == 0 ? static_cast<MPI_Aint>(window_bytes) : 0, 1, MPI_INFO_NULL,
                                    impl_->node, &base, &impl_->win),
            "MPI_Win_allocate_shared");
  MPI_Aint size = 0;
  int disp = 0;
  check_mpi(MPI_Win_shared_query(impl_->win, 0, &size, &disp, &base), "MPI_Win_shared_query");
  auto* bytes = static_cast<unsigned char*>(base);
  impl_->ready = reinterpret_cast<counter*>(bytes);
  impl_->done = impl_->ready + nchunks * static_cast<std::size_t>(local_size_) * counter_stride;
  auto* f = reinterpret_cast<float*>(bytes + ctrl_bytes);
  impl_->avg = f;
  impl_->master = f + extent;
  impl_->grads = f + 2 * extent;
  const auto extent_bytes = static_cast<std::size_t>(extent) * sizeof(float);
  if (impl_->dev) {
    // Errors (registration refused) are every rank's: the window is freed by the destructor.
    validate_collectively(parent, "toru::train::cgdp device", {}, [&] {
      impl_->dev = detail::make_cgdp_device(nchunks, options.compute_stream);
      impl_->dev->pin(impl_->master, extent_bytes);
      impl_->dev->pin(impl_->grads + static_cast<std::size_t>(local_rank_) * static_cast<std::size_t>(extent),
                      extent_bytes);
    });
  }
  if (local_rank_ == 0) {
    for (std::size_t i = 0; i < 2 * nchunks * static_cast<std::size_t>(local_size_); ++i)
      new (impl_->ready + i * counter_stride) counter(0);
    if (impl_->dev)
      impl_->dev->copy_to_host(impl_->master, params.data(), extent_bytes);
    else
      std::memcpy(impl_->master, params.data(), extent_bytes);
  }
  check_mpi(MPI_Barrier(impl_->node), "MPI_Barrier");

  if (nodes_ > 1) check_mpi(MPI_Comm_split(parent, local_rank_, rank, &impl_->cross), "MPI_Comm_split");

  chunk_of_slot_.assign(slots_.size(), -1);
  for (std::size_t c = 0; c < nchunks; ++c) {
    const auto& ch = chunks_[c];
    first_op_.push_back(layers_[static_cast<std::size_t>(ch.first_layer)].op);
    for (int s = ch.first_slot; s <= ch.last_slot; ++s)
      chunk_of_slot_[static_cast<std::size_t>(s)] = static_cast<int>(c);
    const std::int64_t lo = ch.offset + ch.count * local_rank_ / local_size_;
    const std::int64_t hi = ch.offset + ch.count * (local_rank_ + 1) / local_size_;
    impl_->range.emplace_back(lo, hi);
    if (options.host_update)
      impl_->host_opt.emplace_back(opt, hi - lo);
    else
      impl_->worker_opt.emplace_back(opt, ch.count);
  }
  impl_->host_seconds.assign(nchunks, 0);
  stats_.assign(nchunks, {});
  pending_.assign(nchunks, 0);

  // Helper threads: bound away from the workers' cores where the node leaves a free one.
  detail::helper_binding bind =
      options.bind_helpers ? detail::plan_helper_binding(impl_->node, local_rank_) : detail::helper_binding{};

  impl* st = impl_.get();
  const int local_size = local_size_, local_rank = local_rank_;
  const bool host_update = options.host_update;
  const auto chunks = chunks_;
  st->helper = std::thread([st, local_size, local_rank, host_update, chunks] {
    try {
      std::vector<const float*> inputs;
      for (std::int64_t n = 1;; ++n) {
        for (std::size_t c = chunks.size(); c-- > 0;) {
          bool stopped = false;
          wait_until(
              [&] {
                if (st->stop.load(std::memory_order_relaxed)) return stopped = true;
                for (int r = 0; r < local_size; ++r)
                  if (st->at(st->ready, c, r, local_size).load(std::memory_order_acquire) < n) return false;
                return true;
              },
              [] {});
          if (stopped) return;
          const auto t0 = std::chrono::steady_clock::now();
          const auto [lo, hi] = st->range[c];
          const std::size_t len = static_cast<std::size_t>(hi - lo);
          float* out = st->avg + lo;
          const auto p = static_cast<float>(st->nranks);
          inputs.clear();
          for (int r = 0; r < local_size; ++r)
            inputs.push_back(st->grads + static_cast<std::size_t>(r) * static_cast<std::size_t>(st->extent) + lo);
          // One pass: the node's copies summed in rank order and divided (on several nodes the
          // division waits for the nodes' sums, added in node order).
          sum_in_order(out, inputs, len, st->nodes > 1 ? 1.0f : p);
          if (st->nodes > 1) {
            st->node_sums.resize(len * static_cast<std::size_t>(st->nodes));
            check_mpi(MPI_Allgather(out, static_cast<int>(len), MPI_FLOAT, st->node_sums.data(), static_cast<int>(len),
                                    MPI_FLOAT, st->cross),
                      "MPI_Allgather");
            inputs.clear();
            for (int nd = 0; nd < st->nodes; ++nd)
              inputs.push_back(st->node_sums.data() + static_cast<std::size_t>(nd) * len);
            sum_in_order(out, inputs, len, p);
          }
          if (host_update)
            st->host_opt[c].step({st->master + lo, len}, {out, len}, st->lr.load(std::memory_order_relaxed));
          st->host_seconds[c] = seconds_since(t0);
          st->at(st->done, c, local_rank, local_size).store(n, std::memory_order_release);
        }
      }
    } catch (...) {
      st->failure = std::current_exception();
      st->failed.store(true, std::memory_order_release);
    }
  });
  if (bind.core >= 0) detail::bind_thread(st->helper, bind);
  binding_ = options.bind_helpers ? bind.description : "unbound (bind_helpers off)";
}

cgdp::~cgdp() {
  if (!impl_) return;
  impl_->stop.store(true, std::memory_order_relaxed);
  if (impl_->helper.joinable()) impl_->helper.join();
  impl_->dev.reset();  // drains the copies and unpins the window before it goes
  // Not collective on purpose: a step abandoned by an exception on this rank must not wait for
  // the others here. The window and communicators are freed collectively where every rank gets
  // here (the normal path); MPI_Win_free is collective, so it is skipped when a step is mid-flight.
  if (impl_->win != MPI_WIN_NULL && steps_begun_ == steps_acquired_) MPI_Win_free(&impl_->win);
  if (impl_->cross != MPI_COMM_NULL) MPI_Comm_free(&impl_->cross);
  if (impl_->node != MPI_COMM_NULL) MPI_Comm_free(&impl_->node);
}

double cgdp::acquire_weights(std::span<float> params) {
  double waited = 0;
  while (steps_acquired_ != steps_begun_) waited += take(taken_, params);
  return waited;
}

double cgdp::before_forward_op(int op, std::span<float> params) {
  double waited = 0;
  while (steps_acquired_ != steps_begun_ && first_op_[taken_] <= op) waited += take(taken_, params);
  return waited;
}

double cgdp::take(std::size_t c, std::span<float> params) {
  expect(static_cast<std::int64_t>(params.size()) >= impl_->extent, "params",
         fmt::format("at least {} floats", impl_->extent), std::to_string(params.size()));
  const std::int64_t n = steps_begun_;
  impl* st = impl_.get();
  auto failed = [st] {
    if (st->failed.load(std::memory_order_acquire)) std::rethrow_exception(st->failure);
  };
  const auto t0 = std::chrono::steady_clock::now();
  wait_until(
      [&] {
        for (int r = 0; r < local_size_; ++r)
          if (st->at(st->done, c, r, local_size_).load(std::memory_order_acquire) < n) return false;
        return true;
      },
      failed);
  stats_[c].wait_seconds = seconds_since(t0);
  if (options_.on_take) options_.on_take(c);
  const auto t1 = std::chrono::steady_clock::now();
  const auto& ch = chunks_[c];
  const auto len = static_cast<std::size_t>(ch.count);
  if (st->dev) {
    st->dev->weights_in(c, params.data() + ch.offset, st->master + ch.offset, len * sizeof(float));
  } else if (options_.host_update) {
    std::memcpy(params.data() + ch.offset, st->master + ch.offset, len * sizeof(float));
  } else {
    st->worker_opt[c].step({params.data() + ch.offset, len}, {st->avg + ch.offset, len},
                           st->lr.load(std::memory_order_relaxed));
  }
  stats_[c].copy_in_seconds = seconds_since(t1);
  stats_[c].host_seconds = st->host_seconds[c];
  step_wait_ += stats_[c].wait_seconds;
  if (++taken_ == chunks_.size()) steps_acquired_ = n;
  return stats_[c].wait_seconds;
}

std::vector<float> cgdp::optimizer_state(std::int64_t& steps) {
  if (steps_acquired_ != steps_begun_)
    throw error(errc::internal, "cgdp::optimizer_state: a step is in flight (call acquire_weights first)");
  impl& st = *impl_;
  const auto extent = static_cast<std::size_t>(st.extent);
  const auto& opts = options_.host_update ? st.host_opt : st.worker_opt;
  // Every chunk's optimizer (empty ranges too) took every step.
  const auto words = opts.empty() ? 0 : static_cast<std::size_t>(optimizer(opts[0].options(), 1).state().size());
  steps = opts.empty() ? 0 : opts[0].steps();
  std::vector<float> out(words * extent, 0.0f);
  if (words == 0) return out;
  if (!options_.host_update) {
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const auto s = opts[c].state();
      const auto len = static_cast<std::size_t>(chunks_[c].count);
      for (std::size_t w = 0; w < words; ++w)
        std::copy_n(
            s.begin() + static_cast<std::ptrdiff_t>(w * len), len,
            out.begin() + static_cast<std::ptrdiff_t>(w * extent + static_cast<std::size_t>(chunks_[c].offset)));
    }
    return out;
  }
  // Each helper packs its ranges' state; the node allgathers and every rank unpacks all ranges
  // (the same range formula as the constructor). Nodes hold identical state.
  std::vector<float> mine;
  for (std::size_t c = 0; c < chunks_.size(); ++c)
    mine.insert(mine.end(), opts[c].state().begin(), opts[c].state().end());
  auto range_of = [&](std::size_t c, int r) {
    const auto& ch = chunks_[c];
    return std::pair{ch.offset + ch.count * r / local_size_, ch.offset + ch.count * (r + 1) / local_size_};
  };
  std::vector<int> counts(static_cast<std::size_t>(local_size_)), displs(static_cast<std::size_t>(local_size_));
  for (int r = 0; r < local_size_; ++r) {
    std::int64_t n = 0;
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const auto [lo, hi] = range_of(c, r);
      n += (hi - lo) * static_cast<std::int64_t>(words);
    }
    counts[static_cast<std::size_t>(r)] = static_cast<int>(n);
    displs[static_cast<std::size_t>(r)] =
        r == 0 ? 0 : displs[static_cast<std::size_t>(r) - 1] + counts[static_cast<std::size_t>(r) - 1];
  }
  std::vector<float> all(words * extent);
  check_mpi(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(), counts.data(),
                           displs.data(), MPI_FLOAT, st.node),
            "MPI_Allgatherv");
  for (int r = 0; r < local_size_; ++r) {
    std::size_t at = static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]);
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const auto [lo, hi] = range_of(c, r);
      const auto len = static_cast<std::size_t>(hi - lo);
      for (std::size_t w = 0; w < words; ++w, at += len)
        std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(at), len,
                    out.begin() + static_cast<std::ptrdiff_t>(w * extent + static_cast<std::size_t>(lo)));
    }
  }
  return out;
}

void cgdp::set_optimizer_state(std::span<const float> state, std::int64_t steps) {
  if (steps_acquired_ != steps_begun_)
    throw error(errc::internal, "cgdp::set_optimizer_state: a step is in flight (call acquire_weights first)");
  impl& st = *impl_;
  auto& opts = options_.host_update ? st.host_opt : st.worker_opt;
  const auto extent = static_cast<std::size_t>(st.extent);
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    auto& o = opts[c];
    const auto words = static_cast<std::size_t>(optimizer(o.options(), 1).state().size());
    expect(state.size() == words * extent, "optimizer state",
           fmt::format("{} floats ({} per parameter)", words * extent, words), std::to_string(state.size()));
    const auto lo = static_cast<std::size_t>(options_.host_update ? st.range[c].first : chunks_[c].offset);
    const auto len = static_cast<std::size_t>(o.count());
    auto dst = o.state();
    for (std::size_t w = 0; w < words; ++w)
      std::copy_n(state.begin() + static_cast<std::ptrdiff_t>(w * extent + lo), len,
                  dst.begin() + static_cast<std::ptrdiff_t>(w * len));
    o.set_steps(steps);
  }
}

void cgdp::begin_step(std::int64_t step, double lr, std::span<float> gradients) {
  if (steps_acquired_ != steps_begun_)
    throw error(errc::internal,
                "cgdp::begin_step: the previous step's update was not taken (no forward through the hook and no "
                "acquire_weights since)");
  expect(static_cast<std::int64_t>(gradients.size()) >= impl_->extent, "gradients",
         fmt::format("at least {} floats (the slots' extent)", impl_->extent), std::to_string(gradients.size()));
  expect(std::isfinite(lr) && lr > 0, "lr", "a finite learning rate > 0", fmt::format("{}", lr));
  (void)step;
  grads_ = gradients;
  taken_ = 0;
  step_wait_ = 0;
  impl_->lr.store(lr, std::memory_order_relaxed);
  for (std::size_t c = 0; c < chunks_.size(); ++c) pending_[c] = chunks_[c].last_slot - chunks_[c].first_slot + 1;
  ++steps_begun_;
}

void cgdp::post(std::size_t c) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& ch = chunks_[c];
  toru::events::mark("train.chunk", static_cast<std::uint64_t>(ch.count) * sizeof(float),
                     options_.host_update ? "cgdp" : "cgdp-sum", static_cast<double>(c));
  float* dst =
      impl_->grads + static_cast<std::size_t>(local_rank_) * static_cast<std::size_t>(impl_->extent) + ch.offset;
  auto& ready = impl_->at(impl_->ready, c, local_rank_, local_size_);
  if (impl_->dev) {
    impl_->dev->gradients_out(c, dst, grads_.data() + ch.offset, static_cast<std::size_t>(ch.count) * sizeof(float),
                              &ready, steps_begun_);
  } else {
    std::memcpy(dst, grads_.data() + ch.offset, static_cast<std::size_t>(ch.count) * sizeof(float));
    ready.store(steps_begun_, std::memory_order_release);
  }
  pending_[c] = -1;  // posted
  stats_[c].post_seconds = seconds_since(t0);
}

void cgdp::gradient_ready(int slot) {
  expect(slot >= 0 && static_cast<std::size_t>(slot) < slots_.size(), "slot", fmt::format("0..{}", slots_.size() - 1),
         std::to_string(slot));
  const auto c = static_cast<std::size_t>(chunk_of_slot_[static_cast<std::size_t>(slot)]);
  if (pending_[c] <= 0)
    throw error(errc::internal, fmt::format("cgdp: slot {} reported ready twice in one step", slot));
  if (--pending_[c] == 0) post(c);
}

void cgdp::end_backward() {
  // Chunks are posted in backward order (highest first): the helpers take them in that order.
  for (std::size_t c = chunks_.size(); c-- > 0;)
    if (pending_[c] > 0) post(c);
}

}  // namespace toru::train
