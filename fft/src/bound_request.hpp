// SPDX-License-Identifier: BSD-3-Clause
// The persistent requests of the FFT plans (toru/core/request.hpp): one direction of a plan with its
// buffers and scale, checked once (collectively) when bound, run without checks on each start().
#pragma once

#include "toru/core/request.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft::detail {

/// Impl: plan3d or plan1d (check() and perform()). The request refers to impl, which must outlive it.
template <class Impl>
request bound_request(const Impl& impl, const char* what, bool forward, const void* in, void* out, scale s) {
  impl.check(forward, in, out, nullptr, s);
  return request(what, [&impl, forward, in, out, s] { impl.perform(forward, in, out, nullptr, s); });
}

}  // namespace toru::fft::detail
