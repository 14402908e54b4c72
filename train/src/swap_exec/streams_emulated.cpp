// SPDX-License-Identifier: BSD-3-Clause
// The host-emulated device's streams: compute is the calling thread, copies are copy_engine threads
// (emulated_device.hpp), and waiting for an event blocks the host thread, which is what a stall of
// the compute stream is here.
#include <chrono>
#include <thread>
#include <vector>

#include "device_streams.hpp"

namespace toru::train::detail {

namespace {

using clock = std::chrono::steady_clock;

class emulated_streams final : public device_streams {
 public:
  explicit emulated_streams(const emulated_link& link) : d2h_(link.d2h), h2d_(link.h2d) {}
  ~emulated_streams() override { synchronize(); }

  void prepare(std::size_t objects, std::size_t ops) override {
    synchronize();
    host_.clear();
    host_.resize(objects);
    host_bytes_.assign(objects, 0);
    ev_.assign(objects, nullptr);
    op_.assign(ops, {0.0, 0.0});
  }

  void begin_step() override {
    synchronize();
    std::fill(ev_.begin(), ev_.end(), nullptr);
    epoch_ = clock::now();
    d2h_.set_epoch(epoch_);
    h2d_.set_epoch(epoch_);
  }

  void* host_buffer(int k, std::size_t bytes) override {
    const auto i = static_cast<std::size_t>(k);
    if (host_bytes_[i] < bytes) {
      host_[i] = std::make_unique<std::byte[]>(bytes);
      host_bytes_[i] = bytes;
    }
    return host_[i].get();
  }

  void swap_out(int k, void* host, const void* device, std::size_t bytes) override {
    // Compute is synchronous on this thread: the producer has finished.
    ev_[static_cast<std::size_t>(k)] = d2h_.enqueue(host, device, bytes, {});
  }

  void swap_in(int k, void* device, const void* host, std::size_t bytes, int source) override {
    ev_[static_cast<std::size_t>(k)] = h2d_.enqueue(device, host, bytes, {ev_[static_cast<std::size_t>(source)]});
  }

  bool copied(int k) const override { return ev_[static_cast<std::size_t>(k)] != nullptr; }

  double compute_wait(int k) override {
    const auto& e = ev_[static_cast<std::size_t>(k)];
    if (!e || e->done()) return 0;
    const double t0 = now();
    e->wait();
    return now() - t0;
  }

  void before_free(int k) override {
    if (const auto& e = ev_[static_cast<std::size_t>(k)]) e->wait();
  }

  void op_begin(int op) override { op_[static_cast<std::size_t>(op)].first = now(); }

  void op_end(int op, double min_seconds) override {
    auto& iv = op_[static_cast<std::size_t>(op)];
    if (min_seconds > 0)
      std::this_thread::sleep_until(
          epoch_ + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(iv.first + min_seconds)));
    iv.second = now();
  }

  double synchronize() override {
    d2h_.synchronize();
    h2d_.synchronize();
    double end = now();
    for (const auto& e : ev_)
      if (e) end = std::max(end, e->end());
    return end;
  }

  std::pair<double, double> op_interval(int op) const override { return op_[static_cast<std::size_t>(op)]; }
  std::pair<double, double> copy_interval(int k) const override {
    const auto& e = ev_[static_cast<std::size_t>(k)];
    return e ? std::pair{e->start(), e->end()} : std::pair{0.0, 0.0};
  }
  double now() const override { return std::chrono::duration<double>(clock::now() - epoch_).count(); }

 private:
  copy_engine d2h_, h2d_;
  clock::time_point epoch_ = clock::now();
  std::vector<std::unique_ptr<std::byte[]>> host_;
  std::vector<std::size_t> host_bytes_;
  std::vector<event_ptr> ev_;
  std::vector<std::pair<double, double>> op_;
};

}  // namespace

std::unique_ptr<device_streams> make_emulated_streams(const emulated_link& link) {
  return std::make_unique<emulated_streams>(link);
}

}  // namespace toru::train::detail
