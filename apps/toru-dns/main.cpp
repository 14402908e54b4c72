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
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "dns/checkpoint.hpp"
#include "dns/initial.hpp"
#include "dns/slice.hpp"
#include "dns/solver.hpp"
#include "dns/svg_plot.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#if TORU_DNS_STREAM
#include "toru/stream/publisher.hpp"
#endif

namespace {

using json = nlohmann::ordered_json;  // keys in the order written: step, t, dt, ...
using clock_type = std::chrono::steady_clock;
namespace dns = toru::dns;
namespace fs = std::filesystem;

// The published reference for the Taylor-Green vortex at Re = 1600 (512^3 spectral DNS, Brachet
// et al. 1983; van Rees et al. 2011): peak dissipation rate 0.0127 at t = 9.0.
constexpr double reference_peak_eps = 0.0127, reference_peak_t = 9.0;

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

struct record {
  std::int64_t step;
  double t, dt, energy, eps, umax, divmax;
};

json to_json(const record& r) {
  return json{{"step", r.step}, {"t", r.t},       {"dt", r.dt},        {"E", r.energy},
              {"eps", r.eps},   {"umax", r.umax}, {"divmax", r.divmax}};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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

// Rank 0 alone touches series.jsonl and the plots; a failure there is agreed on by every rank.
void on_rank0(MPI_Comm comm, const std::function<void()>& f) {
  toru::validate_collectively(comm, [&] {
    if (toru::mpi_rank(comm) == 0) f();
  });
}

void write_plots(const std::string& out, const std::vector<record>& series,
                 const std::vector<std::pair<double, std::vector<double>>>& spectra, bool tg1600, std::int64_t n) {
  auto save = [&](const dns::plot_spec& p, const std::string& name) {
    if (!dns::write_svg_plot(p, out + "/" + name))
      throw toru::error(toru::errc::io, fmt::format("--out: cannot write '{}/{}'", out, name));
  };
  dns::plot_spec eps{.title = fmt::format("Dissipation rate, {}^3", n), .xlabel = "t", .ylabel = "eps = 2 nu Z"};
  dns::plot_series s{.label = fmt::format("toru-dns {}^3", n)};
  for (const auto& r : series) {
    s.x.push_back(r.t);
    s.y.push_back(r.eps);
  }
  eps.series.push_back(std::move(s));
  if (tg1600)
    eps.series.push_back(
        {.label = "reference peak", .x = {reference_peak_t}, .y = {reference_peak_eps}, .markers = true});
  save(eps, "dissipation.svg");

  dns::plot_spec en{.title = "Kinetic energy", .xlabel = "t", .ylabel = "E"};
  dns::plot_series e{.label = "E(t)"};
  for (const auto& r : series) {
    e.x.push_back(r.t);
    e.y.push_back(r.energy);
  }
  en.series.push_back(std::move(e));
  save(en, "energy.svg");

  dns::plot_spec sp{
      .title = fmt::format("Energy spectrum, {}^3", n), .xlabel = "k", .ylabel = "E(k)", .logx = true, .logy = true};
  for (const auto& [t, ek] : spectra) {
    dns::plot_series ser{.label = fmt::format("t = {:.3g}", t)};
    const double top = *std::max_element(ek.begin(), ek.end());
    for (std::size_t k = 1; k < ek.size(); ++k) {
      if (ek[k] < 1e-14 * top) continue;  // empty shells hold round-off only (e.g. k = 1 for Taylor-Green)
      ser.x.push_back(static_cast<double>(k));
      ser.y.push_back(ek[k]);
    }
    sp.series.push_back(std::move(ser));
  }
  save(sp, "spectrum.svg");
}

int run(const settings& cli, MPI_Comm comm) {
  const auto start = clock_type::now();
  const int rank = toru::mpi_rank(comm), nranks = toru::mpi_size(comm);
  settings s = cli;
  const bool restart = !s.restart.empty();

  on_rank0(comm, [&] {
    std::error_code ec;
    fs::create_directories(s.out, ec);
    if (!fs::is_directory(s.out))
      throw toru::error(toru::errc::io, fmt::format("--out: cannot create directory '{}': {}", s.out, ec.message()));
  });

  dns::checkpoint_header from;
  if (restart) {
    from = dns::peek_checkpoint(comm, s.restart, s.n_given ? s.n : 0);
    if (!s.n_given) s.n = from.n;
    if (!s.re_given && from.re > 0) s.re = from.re;
    if (!s.scheme_given) s.scheme = from.scheme;
    if (!s.forcing_given) s.forcing = from.forcing;
  }
  const dns::solver_config cfg{
      .n = s.n,
      .nu = 1.0 / s.re,
      .method = s.scheme == "rk4" ? dns::scheme::rk4 : dns::scheme::rk3,
      .forcing = s.forcing,
      .fft = {.backend = s.fft == "fftw-mpi" ? dns::fft_backend::fftw_mpi : dns::fft_backend::toru,
              .decomp = s.decomp == "slab"     ? toru::fft::decomposition::slab
                        : s.decomp == "pencil" ? toru::fft::decomposition::pencil
                                               : toru::fft::decomposition::automatic,
              .batched = s.fft_batch}};
  dns::solver sol(comm, cfg);
  if (restart) {
    const auto h = dns::read_checkpoint(sol.grid(), sol.u(), s.restart);
    sol.set_time(h.t, h.step, h.dt);
  } else if (s.ic == "random") {
    dns::random_isotropic(sol.grid(), sol.transformer(), s.spectrum_peak, s.seed, sol.u());
  } else {
    dns::taylor_green(sol.grid(), sol.transformer(), sol.u());
  }
  sol.invalidate();

  // series.jsonl: a fresh run starts it; a restart keeps the lines before its step.
  const std::string series_path = s.out + "/series.jsonl";
  std::vector<record> series;
  std::ofstream series_file;
  on_rank0(comm, [&] {
    std::vector<std::string> kept;
    if (restart) {
      std::ifstream in(series_path);
      for (std::string line; std::getline(in, line);) {
        const json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.contains("step") || j["step"].get<std::int64_t>() >= sol.step()) continue;
        kept.push_back(line);
        series.push_back({j["step"].get<std::int64_t>(), j.value("t", 0.0), j.value("dt", 0.0), j.value("E", 0.0),
                          j.value("eps", 0.0), j.value("umax", 0.0), j.value("divmax", 0.0)});
      }
    }
    series_file.open(series_path, std::ios::trunc);
    for (const auto& l : kept) series_file << l << '\n';
    if (!series_file) throw toru::error(toru::errc::io, fmt::format("--out: cannot write '{}'", series_path));
  });

  std::vector<double> spectra_at = parse_times(s.spectra_at);
  std::erase_if(spectra_at, [&](double t) { return t < sol.t() || t > s.t_end; });
  std::size_t next_spectrum = 0;
  std::vector<std::pair<double, std::vector<double>>> spectra;
  std::vector<std::string> spectrum_files;
  auto write_spectrum = [&](double t) {
    auto ek = sol.grid().spectrum(sol.u());
    const std::string path = fmt::format("{}/spectrum-{:.4f}.json", s.out, t);
    std::vector<int> shells(ek.size());
    std::iota(shells.begin(), shells.end(), 0);
    on_rank0(comm, [&] {
      std::ofstream f(path);
      f << json{{"t", t}, {"step", sol.step()}, {"n", s.n}, {"k", shells}, {"E", ek}}.dump() << '\n';
      if (!f) throw toru::error(toru::errc::io, fmt::format("--out: cannot write '{}'", path));
    });
    spectrum_files.push_back(path);
    spectra.emplace_back(t, std::move(ek));
  };

  const std::string label = fmt::format("{} {} {}x{}{}", sol.transformer().backend_name(),
                                        toru::fft::to_string(sol.transformer().decomp()), sol.transformer().grid()[0],
                                        sol.transformer().grid()[1], sol.transformer().batched() ? " batched" : "");
  std::FILE* progress = s.json ? stderr : stdout;
  if (rank == 0 && !s.quiet)
    fmt::print(progress, "toru-dns: {}^3, Re {}, nu {:.6g}, {} ranks, FFT {}, {}, {}, CFL {}\n", s.n, s.re, cfg.nu,
               nranks, label, s.scheme, s.dt > 0 ? fmt::format("dt {}", s.dt) : "CFL time step", s.cfl);

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
                  .max_frame_bytes = std::max<std::size_t>(4096, static_cast<std::size_t>(s.n * s.n) * sizeof(float)),
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
    pub->publish(toru::stream::make_frame<float>("u_x at z=0", f->step, f->t, {s.n, s.n}, f->plane));
    pub->publish(toru::stream::make_frame<double>("energy spectrum", f->step, f->t,
                                                  {static_cast<std::int64_t>(f->spectrum.size())}, f->spectrum));
    queue_s += since(t0);
  };
#endif
  std::vector<double> step_times, fft_times;
  std::string last_checkpoint;
  std::int64_t steps_run = 0;
  auto last_print = clock_type::now() - std::chrono::hours(1);
  const double eps_time = 1e-12 * std::max(1.0, s.t_end);
  dns::step_stats st;
  while (true) {
    const auto t0 = clock_type::now();
    const double f0 = sol.fft_seconds();
    st = sol.prepare();
    const double prepare_s = std::chrono::duration<double>(clock_type::now() - t0).count();
    const double prepare_fft = sol.fft_seconds() - f0;
    if (!std::isfinite(st.field.energy))
      throw toru::error(
          toru::errc::internal,
          fmt::format("the solution blew up at step {} (t = {}): reduce --cfl or --dt", sol.step(), sol.t()));
    const bool done = sol.t() >= s.t_end - eps_time || (s.steps >= 0 && steps_run >= s.steps);
    const record r{sol.step(),       sol.t(),        sol.last_dt(), st.field.energy, 2 * cfg.nu * st.field.enstrophy,
                   st.velocity.umax, st.field.divmax};
    const bool stats_due = done || steps_run == 0 || sol.step() % s.stats_every == 0;
    if (stats_due && rank == 0) {
      series.push_back(r);
      series_file << to_json(r).dump() << '\n' << std::flush;
    }
#if TORU_DNS_STREAM
    if (pub && (steps_run % s.stream_every == 0 || (done && tap->pending()))) {
      const auto p0 = clock_type::now();
      // What the previous streamed step started has long been reduced: publish it, start this one.
      publish_tap();
      if (steps_run % s.stream_every == 0) {
        const auto s0 = clock_type::now();
        tap->start(sol.u(), sol.step(), sol.t());
        tap_start_s += since(s0);
        ++streamed_steps;
      }
      if (done) publish_tap();
      publish_s += since(p0);
    }
#endif
    while (next_spectrum < spectra_at.size() && spectra_at[next_spectrum] <= sol.t() + eps_time)
      write_spectrum(spectra_at[next_spectrum++]);
    if (steps_run > 0 && s.checkpoint_every > 0 && (sol.step() % s.checkpoint_every == 0 || done)) {
      last_checkpoint = fmt::format("{}/checkpoint-{}.bin", s.out, sol.step());
      dns::write_checkpoint(sol.grid(), sol.u(),
                            {.t = sol.t(),
                             .step = sol.step(),
                             .dt = sol.last_dt(),
                             .re = s.re,
                             .nu = cfg.nu,
                             .forcing = s.forcing,
                             .scheme = s.scheme},
                            last_checkpoint);
    }
    const double per_step = median(step_times);
    if (rank == 0 && !s.quiet && stats_due &&
        (done || std::chrono::duration<double>(clock_type::now() - last_print).count() >= 1.0)) {
      last_print = clock_type::now();
      double left = per_step * std::max(0.0, (s.t_end - sol.t()) / std::max(sol.last_dt(), 1e-300));
      if (s.steps >= 0) left = std::min(left, per_step * static_cast<double>(s.steps - steps_run));
      fmt::print(progress,
                 "step {:>6}  t {:>9.4f}  dt {:.3e}  E {:.6e}  eps {:.6e}  umax {:.4f}  {:.3g} ms/step  ETA {}\n",
                 r.step, r.t, r.dt, r.energy, r.eps, r.umax, per_step * 1e3,
                 done                 ? "done"
                 : step_times.empty() ? "-"
                                      : hms(left));
      std::fflush(progress);
    }
    if (done) break;

    double dt = s.dt > 0 ? s.dt : sol.cfl_dt(st, s.cfl);
    double target = s.t_end;
    if (next_spectrum < spectra_at.size()) target = std::min(target, spectra_at[next_spectrum]);
    if (target - sol.t() <= dt * (1 + 1e-9)) dt = target - sol.t();
    const auto t1 = clock_type::now();
    const double f1 = sol.fft_seconds();
    sol.advance(dt);
    double local[2] = {prepare_s + std::chrono::duration<double>(clock_type::now() - t1).count(),
                       prepare_fft + sol.fft_seconds() - f1};
    double global[2];
    toru::check_mpi(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
    step_times.push_back(global[0]);
    fft_times.push_back(global[1]);
    ++steps_run;
  }
  if (spectra.empty() || spectra.back().first != sol.t()) write_spectrum(sol.t());

  const bool tg1600 = !restart && s.ic == "taylor-green" && std::abs(s.re - 1600) < 1e-9;
  double peak_eps = 0, peak_t = 0;
  for (const auto& r : series)
    if (r.eps > peak_eps) peak_eps = r.eps, peak_t = r.t;
  on_rank0(comm, [&] {
    series_file.close();
    write_plots(s.out, series, spectra, tg1600, s.n);
  });
  const std::uint64_t digest = sol.grid().digest(sol.u());

  double sum_step = 0, sum_fft = 0;
  for (std::size_t i = 0; i < step_times.size(); ++i) sum_step += step_times[i], sum_fft += fft_times[i];
  const double fft_share = sum_step > 0 ? sum_fft / sum_step : 0;
  if (rank == 0) {
    json summary{{"program", "toru-dns"},
                 {"n", s.n},
                 {"ranks", nranks},
                 {"fft", sol.transformer().backend_name()},
                 {"decomposition", std::string(toru::fft::to_string(sol.transformer().decomp()))},
                 {"grid", sol.transformer().grid()},
                 {"fft_batched", sol.transformer().batched()},
                 {"scheme", s.scheme},
                 {"dealias", s.dealias},
                 {"re", s.re},
                 {"nu", cfg.nu},
                 {"ic", restart ? "checkpoint" : s.ic},
                 {"steps", steps_run},
                 {"step", sol.step()},
                 {"t", sol.t()},
                 {"dt", sol.last_dt()},
                 {"E", st.field.energy},
                 {"eps", 2 * cfg.nu * st.field.enstrophy},
                 {"umax", st.velocity.umax},
                 {"divmax", st.field.divmax},
                 {"peak_eps", peak_eps},
                 {"t_peak_eps", peak_t},
                 {"time_per_step", median(step_times)},
                 {"time_per_step_mean", step_times.empty() ? 0.0 : sum_step / static_cast<double>(step_times.size())},
                 {"fft_time_per_step", median(fft_times)},
                 {"fft_share", fft_share},
                 {"pointwise_share", step_times.empty() ? 0.0 : 1 - fft_share},
                 {"wall_s", std::chrono::duration<double>(clock_type::now() - start).count()},
                 {"out", s.out},
                 {"series", series_path},
                 {"spectra", spectrum_files},
                 {"checkpoint", last_checkpoint.empty() ? json(nullptr) : json(last_checkpoint)},
                 {"plots", {s.out + "/dissipation.svg", s.out + "/energy.svg", s.out + "/spectrum.svg"}},
                 {"digest", fmt::format("{:016x}", digest)}};
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
    if (tg1600) {
      summary["reference_peak_eps"] = reference_peak_eps;
      summary["reference_t_peak_eps"] = reference_peak_t;
    }
    if (s.json) {
      std::puts(summary.dump().c_str());
    } else if (!s.quiet) {
      fmt::print(
          "toru-dns: {} steps, {:.4g} ms/step (median; FFT {:.0f}%, pointwise {:.0f}%), peak eps {:.6g} at t = "
          "{:.4g}\n",
          steps_run, median(step_times) * 1e3, 100 * fft_share, 100 * (1 - fft_share), peak_eps, peak_t);
      fmt::print("toru-dns: wrote {}/series.jsonl, spectra, plots (dissipation.svg, energy.svg, spectrum.svg){}\n",
                 s.out, last_checkpoint.empty() ? "" : ", " + last_checkpoint);
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
