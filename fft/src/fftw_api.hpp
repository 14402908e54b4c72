// SPDX-License-Identifier: BSD-3-Clause
// One name for the double (fftw_*) and float (fftwf_*) FFTW calls toru uses.
#pragma once

#include <fftw3.h>

#include <complex>

namespace toru::fft::detail {

template <class T>
struct fftw_api;

template <>
struct fftw_api<double> {
  using plan = fftw_plan;
  using cpx = fftw_complex;
  static plan many_dft(int rank, const int* n, int howmany, cpx* in, const int* inembed, int istride, int idist,
                       cpx* out, const int* onembed, int ostride, int odist, int sign, unsigned flags) {
    return fftw_plan_many_dft(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, sign, flags);
  }
  static plan many_r2c(int rank, const int* n, int howmany, double* in, const int* inembed, int istride, int idist,
                       cpx* out, const int* onembed, int ostride, int odist, unsigned flags) {
    return fftw_plan_many_dft_r2c(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);
  }
  static plan many_c2r(int rank, const int* n, int howmany, cpx* in, const int* inembed, int istride, int idist,
                       double* out, const int* onembed, int ostride, int odist, unsigned flags) {
    return fftw_plan_many_dft_c2r(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);
  }
  using iodim = fftw_iodim64;
  static plan guru_dft(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       int sign, unsigned flags) {
    return fftw_plan_guru64_dft(rank, dims, howmany_rank, howmany, static_cast<cpx*>(in), static_cast<cpx*>(out), sign,
                                flags);
  }
  static plan guru_r2c(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       unsigned flags) {
    return fftw_plan_guru64_dft_r2c(rank, dims, howmany_rank, howmany, static_cast<double*>(in), static_cast<cpx*>(out),
                                    flags);
  }
  static plan guru_c2r(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       unsigned flags) {
    return fftw_plan_guru64_dft_c2r(rank, dims, howmany_rank, howmany, static_cast<cpx*>(in), static_cast<double*>(out),
                                    flags);
  }
  static void execute_dft(plan p, void* in, void* out) {
    fftw_execute_dft(p, static_cast<cpx*>(in), static_cast<cpx*>(out));
  }
  static void execute_r2c(plan p, void* in, void* out) {
    fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<cpx*>(out));
  }
  static void execute_c2r(plan p, void* in, void* out) {
    fftw_execute_dft_c2r(p, static_cast<cpx*>(in), static_cast<double*>(out));
  }
  static plan guru_r2r(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       const fftw_r2r_kind* kind, unsigned flags) {
    return fftw_plan_guru64_r2r(rank, dims, howmany_rank, howmany, static_cast<double*>(in), static_cast<double*>(out),
                                kind, flags);
  }
  static void execute_r2r(plan p, void* in, void* out) {
    fftw_execute_r2r(p, static_cast<double*>(in), static_cast<double*>(out));
  }
  static void destroy(plan p) { fftw_destroy_plan(p); }
  static void* malloc(std::size_t bytes) { return fftw_malloc(bytes); }
  static void free(void* p) { fftw_free(p); }
  static int alignment_of(const void* p) { return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p))); }
};

template <>
struct fftw_api<float> {
  using plan = fftwf_plan;
  using cpx = fftwf_complex;
  static plan many_dft(int rank, const int* n, int howmany, cpx* in, const int* inembed, int istride, int idist,
                       cpx* out, const int* onembed, int ostride, int odist, int sign, unsigned flags) {
    return fftwf_plan_many_dft(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, sign,
                               flags);
  }
  static plan many_r2c(int rank, const int* n, int howmany, float* in, const int* inembed, int istride, int idist,
                       cpx* out, const int* onembed, int ostride, int odist, unsigned flags) {
    return fftwf_plan_many_dft_r2c(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);
  }
  static plan many_c2r(int rank, const int* n, int howmany, cpx* in, const int* inembed, int istride, int idist,
                       float* out, const int* onembed, int ostride, int odist, unsigned flags) {
    return fftwf_plan_many_dft_c2r(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);
  }
  using iodim = fftwf_iodim64;
  static plan guru_dft(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       int sign, unsigned flags) {
    return fftwf_plan_guru64_dft(rank, dims, howmany_rank, howmany, static_cast<cpx*>(in), static_cast<cpx*>(out), sign,
                                 flags);
  }
  static plan guru_r2c(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       unsigned flags) {
    return fftwf_plan_guru64_dft_r2c(rank, dims, howmany_rank, howmany, static_cast<float*>(in), static_cast<cpx*>(out),
                                     flags);
  }
  static plan guru_c2r(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       unsigned flags) {
    return fftwf_plan_guru64_dft_c2r(rank, dims, howmany_rank, howmany, static_cast<cpx*>(in), static_cast<float*>(out),
                                     flags);
  }
  static void execute_dft(plan p, void* in, void* out) {
    fftwf_execute_dft(p, static_cast<cpx*>(in), static_cast<cpx*>(out));
  }
  static void execute_r2c(plan p, void* in, void* out) {
    fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<cpx*>(out));
  }
  static void execute_c2r(plan p, void* in, void* out) {
    fftwf_execute_dft_c2r(p, static_cast<cpx*>(in), static_cast<float*>(out));
  }
  static plan guru_r2r(int rank, const iodim* dims, int howmany_rank, const iodim* howmany, void* in, void* out,
                       const fftw_r2r_kind* kind, unsigned flags) {
    return fftwf_plan_guru64_r2r(rank, dims, howmany_rank, howmany, static_cast<float*>(in), static_cast<float*>(out),
                                 kind, flags);
  }
  static void execute_r2r(plan p, void* in, void* out) {
    fftwf_execute_r2r(p, static_cast<float*>(in), static_cast<float*>(out));
  }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
  static void* malloc(std::size_t bytes) { return fftwf_malloc(bytes); }
  static void free(void* p) { fftwf_free(p); }
  static int alignment_of(const void* p) { return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))); }
};

/// An FFTW plan destroyed with its owner (null: nothing to transform on this rank).
template <class T>
struct owned_fftw_plan {
  typename fftw_api<T>::plan p = nullptr;
  owned_fftw_plan() = default;
  owned_fftw_plan(const owned_fftw_plan&) = delete;
  owned_fftw_plan& operator=(const owned_fftw_plan&) = delete;
  ~owned_fftw_plan() {
    if (p) fftw_api<T>::destroy(p);
  }
};

}  // namespace toru::fft::detail
