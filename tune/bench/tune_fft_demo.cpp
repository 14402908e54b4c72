// SPDX-License-Identifier: BSD-3-Clause
// tune_fft_demo: the tuner (toru::tune::tuner) on toru's 3D FFT, started from a deliberately bad
// configuration, against the best configuration found by timing every one (exhaustive search).
//
//   mpiexec -n 4 tune_fft_demo --n 64 --start decomposition=pencil,overlap=true,chunks=8,algorithm=pairwise
//
// Prints (and with --json writes) the start's time, the tuned configuration's time, the exhaustive
// best's time, all re-measured at the end interleaved (same noise for all three), and the tuner's
// measured gain. An iteration is one forward + one backward transform.
#include <array>
#include <complex>
#include <memory>
#include <vector>

#include "bench/demo_driver.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using cpx = std::complex<double>;

struct fft_workload {
  std::unique_ptr<toru::fft::fft3d<double>> plan;
  std::vector<cpx> a, b;
  void build(std::int64_t n, const toru::tune::config& c) {
    plan = std::make_unique<toru::fft::fft3d<double>>(MPI_COMM_WORLD, std::array<std::int64_t, 3>{n, n, n},
                                                      toru::tune::apply(c));
    a.assign(plan->alloc_size(), cpx(1.0, 0.5));
    b.assign(plan->alloc_size(), cpx());
  }
  void iteration() {
    plan->forward(a.data(), b.data());
    plan->backward(b.data(), a.data(), toru::fft::scale::full);
  }
};

}  // namespace

int main(int argc, char** argv) {
  return toru::tune::demo::run<fft_workload>(
      argc, argv,
      {.name = "tune_fft_demo",
       .what = "fft3d c2c {}^3",
       .iteration = "forward + backward",
       .n = 64,
       .start = "decomposition=pencil,overlap=true,chunks=8,algorithm=pairwise",
       .reps = 7,
       .knobs = toru::tune::fft_knobs(),
       // Without overlap the chunk count means nothing: time one of those configurations.
       .redundant = [](const toru::tune::config& c) { return !c["overlap"].get<bool>() && c["chunks"] != 1; }});
}
