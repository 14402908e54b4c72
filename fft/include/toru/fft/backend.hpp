// SPDX-License-Identifier: BSD-3-Clause
// FFT backends, picked by tag type: toru::fft::fftw (host memory) and toru::fft::cufft (device memory).
//
//   toru::fft::fft3d<double, toru::fft::fftw> plan(MPI_COMM_WORLD, {64, 64, 64});
//
// Each tag has one backend_traits specialisation; a backend that this build cannot run says
// enabled = false (and why), so code can test it with `if constexpr` instead of #ifdef.
#pragma once

#include <concepts>
#include <string_view>

#include "toru/config.hpp"

namespace toru::fft {

/// FFTW 3 on the host (double: libfftw3, float: libfftw3f).
struct fftw {};
/// cuFFT on the device: every buffer (in, out, workspace) is CUDA device or managed memory of the
/// device current when the plan was built; local FFTs are cuFFT plans, exchanges go through
/// toru::comm with device pointers (CUDA-aware MPI, or staged through pinned host memory).
struct cufft {};

template <class Backend>
struct backend_traits;

template <>
struct backend_traits<fftw> {
  static constexpr bool enabled = true;
  static constexpr bool device_memory = false;
  static constexpr std::string_view name = "fftw";
  static constexpr std::string_view why_disabled = "";
};

template <>
struct backend_traits<cufft> {
  // Built when toru is built with CUDA (TORU_ENABLE_CUDA); plans then need a CUDA device on every
  // rank (errc::no_device otherwise) and device buffers.
  static constexpr bool enabled = TORU_ENABLE_CUDA != 0;
  static constexpr bool device_memory = true;
  static constexpr std::string_view name = "cufft";
  static constexpr std::string_view why_disabled = TORU_ENABLE_CUDA ? "" : "toru was built without CUDA";
};

/// A tag type with a backend_traits specialisation.
template <class B>
concept backend = requires {
  { backend_traits<B>::enabled } -> std::convertible_to<bool>;
  { backend_traits<B>::device_memory } -> std::convertible_to<bool>;
  { backend_traits<B>::name } -> std::convertible_to<std::string_view>;
};

/// Precisions the FFT plans are instantiated for.
template <class T>
concept precision = std::same_as<T, float> || std::same_as<T, double>;

}  // namespace toru::fft
