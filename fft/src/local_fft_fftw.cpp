// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <complex>

#include <fmt/format.h>

#include "local_fft.hpp"
#include "toru/core/error.hpp"

namespace toru::fft::detail {

namespace {
// Beyond the caches' reach on current x86 (a few MiB of L2 + L3 per core).
constexpr std::int64_t batch_cap_bytes = std::int64_t{4} << 20;
// The pieces of a batch b above the cap: equal pieces of b's largest divisor within the cap where
// that is at least half of it, one plan instead of two (128^3 r2c on 4 ranks: 32 planes as 2 x 16
// rather than 31 + 1; the 31's MEASURE plan took 0.34 s), else pieces of the cap and, planned too
// (pushed onto `batches`), one of b mod cap.
std::int64_t piece(std::int64_t b, std::int64_t cap, std::vector<std::int64_t>& batches) {
  for (std::int64_t d = cap; 2 * d >= cap; --d)
    if (b % d == 0) return d;
  batches.push_back(b % cap);
  return cap;
}
}  // namespace

template <class T>
local_fft<T>::local_fft(fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches, bool in_place,
                        unsigned flags, void* scratch_in, void* scratch_out, bool packed_real)
    : kind_(kind), dims_(std::move(dims)), in_place_(in_place) {
  const int last = dims_.back();
  const bool real = kind_ == fft_kind::r2c || kind_ == fft_kind::c2r;
  const std::int64_t clast = real ? last / 2 + 1 : last;
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < dims_.size(); ++i) rows *= dims_[i];
  unit_complex_ = rows * clast;
  const std::int64_t cbytes = unit_complex_ * static_cast<std::int64_t>(sizeof(std::complex<T>));
  unit_in_bytes_ = cbytes;  // padded real rows take exactly the bytes of the complex rows
  unit_out_bytes_ = cbytes;
  packed_ = packed_real && real;
  if (packed_) {
    if (in_place_) throw error(errc::internal, "fft: packed real rows cannot be transformed in place");
    const std::int64_t rbytes = rows * last * static_cast<std::int64_t>(sizeof(T));
    (kind_ == fft_kind::r2c ? unit_in_bytes_ : unit_out_bytes_) = rbytes;
  }

  // No planned batch is larger than batch_cap_bytes; a larger batch b runs as pieces, all planned.
  // FFTW_MEASURE times its candidates on the whole batch it is given, and a batch past the caches
  // runs as a loop over its units either way: 32768 rows of 256 points took 0.96 s to plan (256^3,
  // 2 ranks), and 128 planes of 256^2 0.8 s.
  const std::int64_t cap = std::max<std::int64_t>(1, batch_cap_bytes / std::max(unit_in_bytes_, unit_out_bytes_));
  for (std::size_t i = 0, n = batches.size(); i < n; ++i)
    if (batches[i] > cap) {
      const std::int64_t p = piece(batches[i], cap, batches);  // may push onto batches
      batches[i] = p;
    }
  batches.push_back(1);
  std::sort(batches.begin(), batches.end(), std::greater<>());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  if (in_place_) scratch_out = scratch_in;
  if (dims_.size() == 2 && (flags & FFTW_ESTIMATE) != 0 && column_fft<T>::tiles(dims_[0], clast)) {
    const bool c2r = kind_ == fft_kind::c2r;
    const int sign = kind_ == fft_kind::c2c_backward || c2r ? FFTW_BACKWARD : FFTW_FORWARD;
    auto* in_c = static_cast<std::complex<T>*>(scratch_in);
    auto* out_c = static_cast<std::complex<T>*>(scratch_out);
    if (c2r && packed_) {
      rows_ = std::make_unique<local_fft<T>>(kind_, std::vector<int>{last}, std::vector<std::int64_t>{dims_[0]}, false,
                                             flags, scratch_in, scratch_out, true);
      columns_ = std::make_unique<column_fft<T>>(dims_[0], clast, 1, sign, true, flags, in_c, in_c);
      return;
    }
    rows_ =
        std::make_unique<local_fft<T>>(kind_, std::vector<int>{last}, std::vector<std::int64_t>{dims_[0]},
                                       c2r || in_place_, flags, c2r ? scratch_out : scratch_in, scratch_out, packed_);
    if (c2r)
      columns_ = std::make_unique<column_fft<T>>(dims_[0], clast, 1, sign, in_place_, flags, in_c, out_c);
    else
      columns_ = std::make_unique<column_fft<T>>(dims_[0], clast, 1, sign, true, flags, out_c, out_c);
    return;
  }
  for (std::int64_t b : batches) {
    if (b <= 0) continue;
    expect(b <= INT32_MAX, "local FFT batch", "at most 2^31-1 transforms", std::to_string(b));
    entry e{b, make(static_cast<int>(b), flags, scratch_in, scratch_out),
            make(static_cast<int>(b), FFTW_ESTIMATE | FFTW_UNALIGNED, scratch_in, scratch_out)};
    plans_.push_back(e);
  }
}

template <class T>
typename local_fft<T>::api::plan local_fft<T>::make(int howmany, unsigned flags, void* in, void* out) const {
  const int rank = static_cast<int>(dims_.size());
  const int last = dims_.back();
  std::vector<int> cemb(dims_), remb(dims_);
  cemb.back() = last / 2 + 1;
  remb.back() = packed_ ? last : 2 * (last / 2 + 1);
  auto prod = [](const std::vector<int>& v) {
    int p = 1;
    for (int x : v) p *= x;
    return p;
  };
  typename api::plan p = nullptr;
  using cpx = typename api::cpx;
  switch (kind_) {
    case fft_kind::c2c_forward:
    case fft_kind::c2c_backward:
      p = api::many_dft(rank, dims_.data(), howmany, static_cast<cpx*>(in), nullptr, 1, prod(dims_),
                        static_cast<cpx*>(out), nullptr, 1, prod(dims_),
                        kind_ == fft_kind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
      break;
    case fft_kind::r2c:
      p = api::many_r2c(rank, dims_.data(), howmany, static_cast<T*>(in), remb.data(), 1, prod(remb),
                        static_cast<cpx*>(out), cemb.data(), 1, prod(cemb), flags);
      break;
    case fft_kind::c2r:
      p = api::many_c2r(rank, dims_.data(), howmany, static_cast<cpx*>(in), cemb.data(), 1, prod(cemb),
                        static_cast<T*>(out), remb.data(), 1, prod(remb), flags);
      break;
  }
  if (!p)
    throw error(errc::fftw,
                fmt::format("FFTW could not plan a batch of {} transforms of size {}", howmany, fmt::join(dims_, "x")));
  return p;
}

template <class T>
local_fft<T>::~local_fft() {
  for (auto& e : plans_) {
    api::destroy(e.aligned);
    api::destroy(e.unaligned);
  }
}

template <class T>
void local_fft<T>::run(typename api::plan p, void* in, void* out) const {
  switch (kind_) {
    case fft_kind::c2c_forward:
    case fft_kind::c2c_backward:
      api::execute_dft(p, in, out);
      break;
    case fft_kind::r2c:
      api::execute_r2c(p, in, out);
      break;
    case fft_kind::c2r:
      api::execute_c2r(p, in, out);
      break;
  }
}

template <class T>
void local_fft<T>::execute(std::int64_t units, void* in, void* out) const {
  auto* pin = static_cast<char*>(in);
  auto* pout = static_cast<char*>(out);
  if (rows_) {
    using cpx = std::complex<T>;
    const std::int64_t rows = dims_[0];
    for (std::int64_t u = 0; u < units; ++u, pin += unit_in_bytes_, pout += unit_out_bytes_) {
      if (kind_ == fft_kind::c2r && packed_) {
        columns_->execute(reinterpret_cast<const cpx*>(pin), reinterpret_cast<cpx*>(pin));
        rows_->execute(rows, pin, pout);
      } else if (kind_ == fft_kind::c2r) {
        columns_->execute(reinterpret_cast<const cpx*>(pin), reinterpret_cast<cpx*>(pout));
        rows_->execute(rows, pout, pout);
      } else {
        rows_->execute(rows, pin, pout);
        columns_->execute(reinterpret_cast<const cpx*>(pout), reinterpret_cast<cpx*>(pout));
      }
    }
    return;
  }
  // Batches not planned exactly run as pieces of the planned ones (the list ends with 1).
  for (const entry& e : plans_) {
    while (units >= e.batch) {
      const bool aligned = api::alignment_of(pin) == 0 && api::alignment_of(pout) == 0;
      run(aligned ? e.aligned : e.unaligned, pin, pout);
      units -= e.batch;
      pin += e.batch * unit_in_bytes_;
      pout += e.batch * unit_out_bytes_;
    }
  }
}

template class local_fft<float>;
template class local_fft<double>;

}  // namespace toru::fft::detail
