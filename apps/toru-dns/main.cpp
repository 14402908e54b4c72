// SPDX-License-Identifier: BSD-3-Clause
// toru-dns: pseudo-spectral DNS of incompressible Navier-Stokes in a (2 pi)^3 periodic box on
// toru's r2c 3D FFT (or FFTW-MPI's, --fft fftw-mpi, for the side-by-side). See docs/dns.md.
//
//   mpiexec -n 4 toru-dns --n 128 --re 1600 --t-end 12 --out results/tg128
//   mpiexec -n 2 toru-dns --ic random --n 64 --forcing 0.1 --steps 500 --checkpoint-every 100
//   mpiexec -n 3 toru-dns --restart results/dns/checkpoint-500.bin --steps 500
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "dns/simulation.hpp"
#include "dns/slice.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#if TORU_DNS_STREAM
#include "toru/stream/publisher.hpp"
#endif

namespace {

using json = nlohmann::ordered_json;  // keys in the order written: step, t, dt, ...
using clock_type = std::chrono::steady_clock;
namespace dns = toru::dns;

struct settings {
  std::int64_t n = 64;
  double re = 1600;
  std::string ic = "taylor-green";
  std::string restart;
  double t_end = 10;
  std::int64_t steps = -1;
  double cfl = 0.5;
  double dt = 0;
  std::string scheme = "rk3";
  std::string dealias = "two-thirds";
  double forcing = 0;
  double spectrum_peak = 4;
  std::uint64_t seed = 1;
  std::string out = "results/dns";
  std::int64_t stats_every = 1;
  std::string spectra_at;
  std::int64_t checkpoint_every = 0;
  std::string decomp = "auto";
  std::string fft = "toru";
  bool fft_batch = false;
  bool json = false;
  bool quiet = false;
  // Streaming to viewers (off unless a port or a recording directory is given).
  int stream_port = -1, stream_tcp_port = -1;
  std::string stream_record;
  std::int64_t stream_every = 1;
  // Whether these were given (a restart takes them from the checkpoint otherwise).
  bool n_given = false, re_given = false, scheme_given = false, forcing_given = false;
};

std::vector<double> parse_times(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    std::size_t used = 0;
    double v = -1;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    toru::expect(used > 0 && item.find_first_not_of(" \t", used) == std::string::npos && v >= 0 && std::isfinite(v),
                 "--spectra-at", "comma-separated times >= 0 (e.g. \"2,4.5,9\")", item);
    out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string hms(double seconds) {
  const auto s = static_cast<long>(std::max(0.0, seconds) + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

// The options the library takes, from the command line's.
dns::run_options to_options(const settings& s) {
  dns::run_options o{.ic = s.ic == "random" ? dns::initial_condition::random : dns::initial_condition::taylor_green,
                     .restart = s.restart,
                     .t_end = s.t_end,
                     .steps = s.steps,
                     .cfl = s.cfl,
                     .dt = s.dt,
                     .spectrum_peak = s.spectrum_peak,
                     .seed = s.seed,
                     .out = s.out,
                     .stats_every = s.stats_every,
                     .spectra_at = parse_times(s.spectra_at),
                     .checkpoint_every = s.checkpoint_every,
                     .fft = {.backend = s.fft == "fftw-mpi" ? dns::fft_backend::fftw_mpi : dns::fft_backend::toru,
                             .decomp = s.decomp == "slab"     ? toru::fft::decomposition::slab
                                       : s.decomp == "pencil" ? toru::fft::decomposition::pencil
                                                              : toru::fft::decomposition::automatic,
                             .batched = s.fft_batch}};
  // A restart takes what was not given from the checkpoint.
  if (s.n_given || s.restart.empty()) o.n = s.n;
  if (s.re_given || s.restart.empty()) o.re = s.re;
  if (s.scheme_given || s.restart.empty()) o.method = s.scheme == "rk4" ? dns::scheme::rk4 : dns::scheme::rk3;
  if (s.forcing_given || s.restart.empty()) o.forcing = s.forcing;
  return o;
}

int run(const settings& s, MPI_Comm comm) {
  const auto start = clock_type::now();
  const int rank = toru::mpi_rank(comm), nranks = toru::mpi_size(comm);
  dns::simulation sim(comm, to_options(s));
  const dns::run_options& o = sim.options();
  const dns::solver& sol = sim.solution();
  const std::string scheme = dns::to_string(*o.method);

  const std::string label = fmt::format("{} {} {}x{}{}", sol.transformer().backend_name(),
                                        toru::fft::to_string(sol.transformer().decomp()), sol.transformer().grid()[0],
                                        sol.transformer().grid()[1], sol.transformer().batched() ? " batched" : "");
  std::FILE* progress = s.json ? stderr : stdout;
  if (rank == 0 && !s.quiet)
    fmt::print(progress, "toru-dns: {}^3, Re {}, nu {:.6g}, {} ranks, FFT {}, {}, {}, CFL {}\n", *o.n, *o.re, sim.nu(),
               nranks, label, scheme, s.dt > 0 ? fmt::format("dt {}", s.dt) : "CFL time step", s.cfl);

#if TORU_DNS_STREAM
  // The publisher copies each frame and returns: a slow or absent viewer never slows the run.
  std::unique_ptr<toru::stream::publisher> pub;
  if (s.stream_port >= 0 || s.stream_tcp_port >= 0 || !s.stream_record.empty())
    pub = std::make_unique<toru::stream::publisher>(
        comm, toru::stream::publisher_options{
                  // Two frames a step. The encoder runs at low priority and may fall behind for a
                  // while when every core runs a rank: 64 slots (32 steps) absorb that without a
                  // loss, slots sized to the plane (the largest frame), not the 16 MiB default.
                  .queue_slots = 64,
                  .max_frame_bytes = std::max<std::size_t>(4096, static_cast<std::size_t>(*o.n * *o.n) * sizeof(float)),
                  .record_dir = s.stream_record,
                  .server = {.http_port = s.stream_port, .tcp_port = s.stream_tcp_port, .title = "toru-dns"}});
  if (pub && rank == 0 && !s.quiet)
    fmt::print(progress, "toru-dns: streaming{}{}{}\n",
               pub->http_port() >= 0 ? fmt::format(", viewer page http://<host>:{}/", pub->http_port()) : "",
               pub->tcp_port() >= 0 ? fmt::format(", TCP port {}", pub->tcp_port()) : "",
               s.stream_record.empty() ? "" : ", recording to " + s.stream_record);
  double publish_s = 0;  // on the critical path: the slice, the spectrum and the copies into the queue
  // Its parts, so the direct measure says where the time goes: the local pass over the modes and
  // the reduction's start (tap_start_s), its completion and the 2-D FFT on the root
  // (tap_collect_s), the copies into the queue (queue_s, with any wait for a free slot).
  double tap_start_s = 0, tap_collect_s = 0, queue_s = 0;
  std::int64_t streamed_steps = 0;
  std::unique_ptr<dns::slice_tap> tap;
  if (pub) tap = std::make_unique<dns::slice_tap>(sol.grid(), 0);
  auto since = [](clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); };
  auto publish_tap = [&]() {
    auto t0 = clock_type::now();
    auto f = tap->collect();
    tap_collect_s += since(t0);
    if (!f || rank != 0) return;
    t0 = clock_type::now();
    pub->publish(toru::stream::make_frame<float>("u_x at z=0", f->step, f->t, {*o.n, *o.n}, f->plane));
    pub->publish(toru::stream::make_frame<double>("energy spectrum", f->step, f->t,
                                                  {static_cast<std::int64_t>(f->spectrum.size())}, f->spectrum));
    queue_s += since(t0);
  };
#endif
  auto last_print = clock_type::now() - std::chrono::hours(1);
  sim.on_step([&](const dns::step_event& e) {
#if TORU_DNS_STREAM
    if (pub && (e.steps_run % s.stream_every == 0 || (e.done && tap->pending()))) {
      const auto p0 = clock_type::now();
      // What the previous streamed step started has long been reduced: publish it, start this one.
      publish_tap();
      if (e.steps_run % s.stream_every == 0) {
        const auto s0 = clock_type::now();
        tap->start(sol.u(), e.record.step, e.record.t);
        tap_start_s += since(s0);
        ++streamed_steps;
      }
      if (e.done) publish_tap();
      publish_s += since(p0);
    }
#endif
    if (rank != 0 || s.quiet || !e.stats_due ||
        (!e.done && std::chrono::duration<double>(clock_type::now() - last_print).count() < 1.0))
      return;
    last_print = clock_type::now();
    const dns::step_record& r = e.record;
    double left = e.step_seconds * std::max(0.0, (s.t_end - r.t) / std::max(r.dt, 1e-300));
    if (s.steps >= 0) left = std::min(left, e.step_seconds * static_cast<double>(s.steps - e.steps_run));
    fmt::print(progress,
               "step {:>6}  t {:>9.4f}  dt {:.3e}  E {:.6e}  eps {:.6e}  umax {:.4f}  {:.3g} ms/step  ETA {}\n", r.step,
               r.t, r.dt, r.energy, r.eps, r.umax, e.step_seconds * 1e3,
               e.done             ? "done"
               : e.steps_run == 0 ? "-"
                                  : hms(left));
    std::fflush(progress);
  });
  const dns::run_summary sum = sim.run();

  if (rank == 0) {
    json summary{{"program", "toru-dns"},
                 {"n", *o.n},
                 {"ranks", nranks},
                 {"fft", sol.transformer().backend_name()},
                 {"decomposition", std::string(toru::fft::to_string(sol.transformer().decomp()))},
                 {"grid", sol.transformer().grid()},
                 {"fft_batched", sol.transformer().batched()},
                 {"scheme", scheme},
                 {"dealias", s.dealias},
                 {"re", *o.re},
                 {"nu", sim.nu()},
                 {"ic", s.restart.empty() ? s.ic : "checkpoint"},
                 {"steps", sum.steps_run},
                 {"step", sum.last.step},
                 {"t", sum.last.t},
                 {"dt", sum.last.dt},
                 {"E", sum.last.energy},
                 {"eps", sum.last.eps},
                 {"umax", sum.last.umax},
                 {"divmax", sum.last.divmax},
                 {"peak_eps", sum.peak_eps},
                 {"t_peak_eps", sum.t_peak_eps},
                 {"time_per_step", sum.time_per_step},
                 {"time_per_step_mean", sum.time_per_step_mean},
                 {"fft_time_per_step", sum.fft_time_per_step},
                 {"fft_share", sum.fft_share},
                 {"pointwise_share", sum.steps_run == 0 ? 0.0 : 1 - sum.fft_share},
                 {"wall_s", std::chrono::duration<double>(clock_type::now() - start).count()},
                 {"out", o.out},
                 {"series", sum.series},
                 {"spectra", sum.spectra},
                 {"checkpoint", sum.checkpoint.empty() ? json(nullptr) : json(sum.checkpoint)},
                 {"plots", sum.plots},
                 {"digest", fmt::format("{:016x}", sum.digest)}};
#if TORU_DNS_STREAM
    if (pub) {
      pub->flush(2);
      const auto c = pub->counters();
      summary["stream"] = {{"offered", c.offered},
                           {"dropped", c.dropped},
                           {"encoded", c.encoded},
                           {"recorded", c.recorded},
                           {"acknowledged", c.acknowledged},
                           {"publish_s", publish_s},
                           {"blocked", c.blocked},
                           {"blocked_s", c.blocked_s},
                           {"tap_start_s", tap_start_s},
                           {"tap_collect_s", tap_collect_s},
                           {"queue_s", queue_s},
                           {"streamed_steps", streamed_steps}};
    }
#endif
    if (sum.tg1600) {
      summary["reference_peak_eps"] = dns::tg1600_peak_eps;
      summary["reference_t_peak_eps"] = dns::tg1600_peak_t;
    }
    if (s.json) {
      std::puts(summary.dump().c_str());
    } else if (!s.quiet) {
      fmt::print(
          "toru-dns: {} steps, {:.4g} ms/step (median; FFT {:.0f}%, pointwise {:.0f}%), peak eps {:.6g} at t = "
          "{:.4g}\n",
          sum.steps_run, sum.time_per_step * 1e3, 100 * sum.fft_share, 100 * (1 - sum.fft_share), sum.peak_eps,
          sum.t_peak_eps);
      fmt::print("toru-dns: wrote {}/series.jsonl, spectra, plots (dissipation.svg, energy.svg, spectrum.svg){}\n",
                 o.out, sum.checkpoint.empty() ? "" : ", " + sum.checkpoint);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"toru-dns: pseudo-spectral DNS of incompressible Navier-Stokes in a (2 pi)^3 periodic box", "toru-dns"};
  app.add_option("--n", s.n, "grid points per axis")
      ->check(CLI::Range(std::int64_t{4}, std::int64_t{16384}))
      ->capture_default_str();
  app.add_option("--re", s.re, "Reynolds number U0 L / nu (U0 = L = 1)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ic", s.ic, "initial condition")
      ->check(CLI::IsMember({"taylor-green", "random", "checkpoint"}))
      ->capture_default_str();
  app.add_option("--restart", s.restart, "checkpoint file to start from (implies --ic checkpoint)");
  app.add_option("--t-end", s.t_end, "end time")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--steps", s.steps, "stop after this many steps of this run (whichever comes first with --t-end)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--cfl", s.cfl, "CFL number C: dt = C dx / max(|u|+|v|+|w|)")
      ->check(CLI::Range(1e-6, 2.0))
      ->capture_default_str();
  app.add_option("--dt", s.dt, "fixed time step (overrides --cfl)")->check(CLI::PositiveNumber);
  app.add_option("--scheme", s.scheme, "time stepper")->check(CLI::IsMember({"rk3", "rk4"}))->capture_default_str();
  app.add_option("--dealias", s.dealias, "dealiasing (the 2/3 rule; phase shifting is not implemented)")
      ->check(CLI::IsMember({"two-thirds", "phase-shift"}))
      ->capture_default_str();
  app.add_option("--forcing", s.forcing, "power of the linear forcing (0 = off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--spectrum-peak", s.spectrum_peak, "--ic random: peak wavenumber of E(k)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", s.seed, "--ic random: seed")->capture_default_str();
  app.add_option("--out", s.out, "output directory")->capture_default_str();
  app.add_option("--stats-every", s.stats_every, "steps between series.jsonl lines")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--spectra-at", s.spectra_at, "times to write E(k) at, e.g. \"2,4.5,9\" (and always at the end)");
  app.add_option("--checkpoint-every", s.checkpoint_every, "steps between checkpoints, and one at the end (0 = none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--decomp", s.decomp, "FFT decomposition")
      ->check(CLI::IsMember({"auto", "slab", "pencil"}))
      ->capture_default_str();
  app.add_option("--fft", s.fft, "FFT backend")->check(CLI::IsMember({"toru", "fftw-mpi"}))->capture_default_str();
  app.add_flag("--fft-batch,!--no-fft-batch", s.fft_batch,
               "vector fields (u, omega, u x omega) in one batched transform each, one exchange per transpose for "
               "the three components (toru: fft3d_batch_r2c on pencils; FFTW-MPI: plan_many) instead of three")
      ->capture_default_str();
  app.add_option("--stream-port", s.stream_port,
                 "publish a slice (u_x at z=0) and E(k) per step; serve the viewer page and WebSocket on this port "
                 "(0: any free port; off by default; see docs/stream.md)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--stream-tcp-port", s.stream_tcp_port, "the same to TCP viewers (toru-view --connect) on this port")
      ->check(CLI::Range(0, 65535));
  app.add_option("--stream-record", s.stream_record,
                 "record the streamed frames to this directory (toru-view --store)");
  app.add_option("--stream-every", s.stream_every, "steps between streamed frames")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--json", s.json, "print the final summary as one JSON object on stdout (progress goes to stderr)");
  app.add_flag("--quiet", s.quiet, "no progress lines");

  int provided = 0;
  // MULTIPLE, as toru-fft-bench: toru's pipelined all-to-all uses a helper thread when it may.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  toru::set_error_rank(rank);
  const int rc = toru::apps::run_cli(
      app, argc, argv,
      [&] {
        s.n_given = app.count("--n") > 0;
        s.re_given = app.count("--re") > 0;
        s.scheme_given = app.count("--scheme") > 0;
        s.forcing_given = app.count("--forcing") > 0;
        if (!s.restart.empty() && app.count("--ic") > 0 && s.ic != "checkpoint")
          throw CLI::ValidationError(
              "--restart", "--restart starts from a checkpoint; expected no --ic or --ic checkpoint, got --ic " + s.ic);
        if (s.ic == "checkpoint" && s.restart.empty())
          throw CLI::ValidationError("--ic", "--ic checkpoint needs --restart FILE");
        if (s.dealias != "two-thirds")
          throw CLI::ValidationError("--dealias", "phase-shift dealiasing is not implemented; expected two-thirds");
        if (s.fft == "fftw-mpi" && s.decomp == "pencil")
          throw CLI::ValidationError("--decomp",
                                     "FFTW-MPI has slabs only; expected --decomp auto or slab with --fft fftw-mpi");
        parse_times(s.spectra_at);
#if !TORU_DNS_STREAM
        if (s.stream_port >= 0 || s.stream_tcp_port >= 0 || !s.stream_record.empty())
          throw CLI::ValidationError("--stream-port", "this toru-dns was built without stream/ (see docs/stream.md)");
#endif
        return run(s, MPI_COMM_WORLD);
      },
      rank);
  MPI_Finalize();
  return rc;
}
