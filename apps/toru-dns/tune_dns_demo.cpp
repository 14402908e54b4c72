// SPDX-License-Identifier: BSD-3-Clause
// tune_dns_demo: the tuner on toru-dns's solver (one time step = one iteration), from a
// deliberately bad configuration, against the best of an exhaustive timing of every configuration.
// Knobs: the FFT backend (toru, fftw-mpi), the decomposition (slab, pencil) and toru's all-to-all
// algorithm and chunks (TORU_ALLTOALL_ALGORITHM / TORU_ALLTOALL_CHUNKS, read when plans are built).
// A configuration that cannot be built (FFTW-MPI with pencils) is skipped by the tuner.
//
//   mpiexec -n 4 tune_dns_demo --n 48 --start backend=toru,decomposition=pencil,algorithm=pairwise,chunks=4
#include <cstdlib>
#include <memory>
#include <string>

#include "bench/demo_driver.hpp"
#include "dns/initial.hpp"
#include "dns/solver.hpp"

namespace {

struct dns_workload {
  std::unique_ptr<toru::dns::solver> s;
  void build(std::int64_t n, const toru::tune::config& c) {
    s.reset();  // one solver's fields in memory at a time
    // The comm knobs reach toru's plans through the environment toru reads at plan time (equal on all ranks).
    setenv("TORU_ALLTOALL_ALGORITHM", c["algorithm"].get<std::string>().c_str(), 1);
    setenv("TORU_ALLTOALL_CHUNKS", std::to_string(c["chunks"].get<int>()).c_str(), 1);
    toru::dns::solver_config cfg{.n = n, .nu = 1.0 / 400};
    cfg.fft.backend = c["backend"] == "toru" ? toru::dns::fft_backend::toru : toru::dns::fft_backend::fftw_mpi;
    cfg.fft.decomp = c["decomposition"] == "slab" ? toru::fft::decomposition::slab : toru::fft::decomposition::pencil;
    s = std::make_unique<toru::dns::solver>(MPI_COMM_WORLD, cfg);
    toru::dns::taylor_green(s->grid(), s->transformer(), s->u());
    s->invalidate();
  }
  void iteration() {
    s->prepare();
    s->advance(1e-3);
  }
};

}  // namespace

int main(int argc, char** argv) {
  return toru::tune::demo::run<dns_workload>(argc, argv,
                                             {.name = "tune_dns_demo",
                                              .what = "toru-dns {}^3",
                                              .iteration = "one RK3 step",
                                              .n = 48,
                                              .start = "backend=toru,decomposition=pencil,algorithm=pairwise,chunks=4",
                                              .reps = 5,
                                              .knobs = {{"backend", {"toru", "fftw-mpi"}},
                                                        {"decomposition", {"slab", "pencil"}},
                                                        {"algorithm", {"automatic", "direct", "pairwise"}},
                                                        {"chunks", {1, 4}}}});
}
