// SPDX-License-Identifier: BSD-3-Clause
// backend_ops on host memory: FFTW plans (local_fft), the host transposes through toru::comm or
// the node's shared window, FFTW-aligned work memory.
#include <fmt/format.h>

#include <algorithm>

#include "backend_ops.hpp"
#include "common.hpp"
#include "fftw_api.hpp"
#include "node_window.hpp"
#include "toru/core/error.hpp"

namespace toru::fft::detail {

namespace {

/// FFT of rows, with the six-step twiddle exp(-+2 pi i n2 k1 / n) applied after (forward) or
/// before (backward, conjugated) it. Rows are the B-layout rows: n2 = first_row + row, k1 = column.
template <class T>
class twiddle_fft final : public line_op<T> {
 public:
  twiddle_fft(std::unique_ptr<local_fft<T>> fft, const std::vector<std::complex<T>>& tw, std::int64_t row_len,
              bool forward)
      : fft_(std::move(fft)), tw_(tw), len_(row_len), forward_(forward) {}
  void apply(std::complex<T>* stage, std::int64_t u0, std::int64_t u1) const override {
    if (u1 <= u0) return;
    std::complex<T>* p = stage + u0 * len_;
    const std::complex<T>* w = tw_.data() + u0 * len_;
    const std::int64_t count = (u1 - u0) * len_;
    if (forward_) {
      fft_->execute(u1 - u0, p, p);
      for (std::int64_t i = 0; i < count; ++i) p[i] *= w[i];
    } else {
      for (std::int64_t i = 0; i < count; ++i) p[i] *= std::conj(w[i]);
      fft_->execute(u1 - u0, p, p);
    }
  }

 private:
  std::unique_ptr<local_fft<T>> fft_;
  const std::vector<std::complex<T>>& tw_;
  std::int64_t len_;
  bool forward_;
};

template <class T>
class fftw_ops final : public backend_ops<T> {
 public:
  explicit fftw_ops(unsigned flags) : flags_(flags) {}

  bool device_memory() const override { return false; }
  std::shared_ptr<void> allocate(std::size_t bytes) const override {
    void* p = fftw_malloc(std::max<std::size_t>(bytes, 1));
    if (!p) throw error(errc::out_of_memory, fmt::format("could not allocate {} bytes of FFT workspace", bytes));
    return {p, [](void* q) { fftw_free(q); }};
  }
  void plan_on(void* scratch_a, void* scratch_b) override {
    scratch_a_ = scratch_a;
    scratch_b_ = scratch_b;
  }

  std::unique_ptr<step<T>> fft_step(fft_kind kind, std::vector<int> dims, std::int64_t units) override {
    auto in_place = fft(kind, dims, {units}, true);
    return std::make_unique<detail::fft_step<T>>(std::move(in_place), fft(kind, std::move(dims), {units}, false),
                                                 units);
  }
  std::unique_ptr<line_op<T>> fft_lines(fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches,
                                        bool from_window) override {
    // The window's transposes run the line FFTs out of place from the shared buffer.
    auto oop = from_window ? fft(kind, dims, batches, false) : nullptr;
    return std::make_unique<detail::fft_lines<T>>(fft(kind, std::move(dims), std::move(batches), true), std::move(oop));
  }
  std::unique_ptr<line_op<T>> twiddle_fft(fft_kind kind, std::int64_t len, std::vector<std::int64_t> batches,
                                          const std::vector<std::complex<T>>& twiddle, bool forward) override {
    return std::make_unique<detail::twiddle_fft<T>>(fft(kind, {static_cast<int>(len)}, std::move(batches), true),
                                                    twiddle, len, forward);
  }
  std::unique_ptr<step<T>> transpose(comm_ptr c, transpose_geometry g, std::unique_ptr<line_op<T>> op,
                                     const exchange_settings& x, std::size_t& workspace) override {
    const node_window* win = nullptr;
    if (x.window) {
      const std::int64_t elems = g.T * g.a_count[g.me] * g.nb;  // this rank's destination stage
      win = shared_window(c->mpi(), checked_bytes(elems, sizeof(std::complex<T>), "FFT window"));
    }
    auto s = std::make_unique<transpose_step<T>>(std::move(c), std::move(g), std::move(op), x.chunks, x.overlap, x.type,
                                                 x.algorithm, win);
    workspace = std::max(workspace, s->workspace_size());
    return s;
  }

  void check_buffers_local(const void* in, std::int64_t in_elems, const void* out,
                           std::int64_t out_elems) const override {
    check_buffers(in, in_elems, out, out_elems);
  }
  void check_buffers_collective(MPI_Comm, const void*, std::int64_t, const void*, std::int64_t,
                                const void*) const override {}
  void* exchange_workspace(char* ws_after_regions) const override { return ws_after_regions; }
  void scale(std::complex<T>* data, std::int64_t count, T factor) const override { scale_array(data, count, factor); }
  void finish() const override {}

 private:
  std::unique_ptr<local_fft<T>> fft(fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches,
                                    bool in_place) const {
    return std::make_unique<local_fft<T>>(kind, std::move(dims), std::move(batches), in_place, flags_, scratch_a_,
                                          scratch_b_);
  }

  unsigned flags_;
  void* scratch_a_ = nullptr;
  void* scratch_b_ = nullptr;
};

}  // namespace

template <class T>
std::unique_ptr<backend_ops<T>> make_fftw_ops(unsigned flags) {
  return std::make_unique<fftw_ops<T>>(flags);
}

template std::unique_ptr<backend_ops<float>> make_fftw_ops<float>(unsigned);
template std::unique_ptr<backend_ops<double>> make_fftw_ops<double>(unsigned);

}  // namespace toru::fft::detail
