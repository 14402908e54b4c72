// SPDX-License-Identifier: BSD-3-Clause
#include "dns/simulation.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dns/checkpoint.hpp"
#include "dns/initial.hpp"
#include "dns/svg_plot.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::dns {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written: step, t, dt, ...
using clock_type = std::chrono::steady_clock;
namespace fs = std::filesystem;

json to_json(const step_record& r) {
  return json{{"step", r.step}, {"t", r.t},       {"dt", r.dt},        {"E", r.energy},
              {"eps", r.eps},   {"umax", r.umax}, {"divmax", r.divmax}};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Rank 0 alone touches the output files; a failure there is agreed on by every rank.
void on_rank0(MPI_Comm comm, const std::function<void()>& f) {
  toru::validate_collectively(comm, [&] {
    if (toru::mpi_rank(comm) == 0) f();
  });
}

std::int64_t bits(double v) { return std::bit_cast<std::int64_t>(v); }

void validate(MPI_Comm comm, const run_options& o) {
  std::uint64_t spectra_bits = o.spectra_at.size();
  for (double t : o.spectra_at) spectra_bits = spectra_bits * 31 + std::bit_cast<std::uint64_t>(t);
  toru::validate_collectively(
      comm, "toru::dns::simulation",
      {{"run_options.n", o.n.value_or(0)},
       {"run_options.re", bits(o.re.value_or(0))},
       {"run_options.t_end", bits(o.t_end)},
       {"run_options.steps", o.steps},
       {"run_options.cfl", bits(o.cfl)},
       {"run_options.dt", bits(o.dt)},
       {"run_options.stats_every", o.stats_every},
       {"run_options.checkpoint_every", o.checkpoint_every},
       {"run_options.spectra_at", static_cast<std::int64_t>(spectra_bits >> 2), true},
       toru::same_text("run_options.out", o.out),
       toru::same_text("run_options.restart", o.restart)},
      [&] {
        auto str = [](auto v) { return fmt::format("{}", v); };
        if (o.n) toru::expect(*o.n >= 4, "run_options.n", "a grid size >= 4", str(*o.n));
        if (o.re)
          toru::expect(*o.re > 0 && std::isfinite(*o.re), "run_options.re", "a Reynolds number > 0", str(*o.re));
        if (o.forcing)
          toru::expect(*o.forcing >= 0 && std::isfinite(*o.forcing), "run_options.forcing", "a power >= 0",
                       str(*o.forcing));
        toru::expect(o.t_end >= 0 && std::isfinite(o.t_end), "run_options.t_end", "an end time >= 0", str(o.t_end));
        toru::expect(o.steps >= -1, "run_options.steps", "a step count >= 0 (or -1: no limit)", str(o.steps));
        toru::expect(o.cfl > 0 && o.cfl <= 2, "run_options.cfl", "a CFL number in (0, 2]", str(o.cfl));
        toru::expect(o.dt >= 0 && std::isfinite(o.dt), "run_options.dt", "a time step > 0 (or 0: the CFL condition)",
                     str(o.dt));
        toru::expect(o.spectrum_peak > 0, "run_options.spectrum_peak", "a wavenumber > 0", str(o.spectrum_peak));
        toru::expect(o.stats_every >= 1, "run_options.stats_every", "a step count >= 1", str(o.stats_every));
        toru::expect(o.checkpoint_every >= 0, "run_options.checkpoint_every", "a step count >= 0 (0: none)",
                     str(o.checkpoint_every));
        toru::expect(!o.out.empty(), "run_options.out", "an output directory", "\"\"");
        for (double t : o.spectra_at)
          toru::expect(t >= 0 && std::isfinite(t), "run_options.spectra_at", "times >= 0", str(t));
      });
}

void write_plots(const std::string& out, const std::vector<step_record>& series,
                 const std::vector<std::pair<double, std::vector<double>>>& spectra, bool tg1600, std::int64_t n) {
  auto save = [&](const plot_spec& p, const std::string& name) {
    if (!write_svg_plot(p, out + "/" + name))
      throw toru::error(toru::errc::io, fmt::format("--out: cannot write '{}/{}'", out, name));
  };
  plot_spec eps{.title = fmt::format("Dissipation rate, {}^3", n), .xlabel = "t", .ylabel = "eps = 2 nu Z"};
  plot_series s{.label = fmt::format("toru-dns {}^3", n)};
  for (const auto& r : series) {
    s.x.push_back(r.t);
    s.y.push_back(r.eps);
  }
  eps.series.push_back(std::move(s));
  if (tg1600)
    eps.series.push_back({.label = "reference peak", .x = {tg1600_peak_t}, .y = {tg1600_peak_eps}, .markers = true});
  save(eps, "dissipation.svg");

  plot_spec en{.title = "Kinetic energy", .xlabel = "t", .ylabel = "E"};
  plot_series e{.label = "E(t)"};
  for (const auto& r : series) {
    e.x.push_back(r.t);
    e.y.push_back(r.energy);
  }
  en.series.push_back(std::move(e));
  save(en, "energy.svg");

  plot_spec sp{
      .title = fmt::format("Energy spectrum, {}^3", n), .xlabel = "k", .ylabel = "E(k)", .logx = true, .logy = true};
  for (const auto& [t, ek] : spectra) {
    plot_series ser{.label = fmt::format("t = {:.3g}", t)};
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

}  // namespace

simulation::simulation(MPI_Comm comm, run_options opts)
    : comm_(comm), o_(std::move(opts)), restart_(!o_.restart.empty()), start_(clock_type::now()) {
  validate(comm_, o_);
  on_rank0(comm_, [&] {
    std::error_code ec;
    fs::create_directories(o_.out, ec);
    if (!fs::is_directory(o_.out))
      throw toru::error(toru::errc::io, fmt::format("--out: cannot create directory '{}': {}", o_.out, ec.message()));
  });

  if (restart_) {
    const checkpoint_header from = peek_checkpoint(comm_, o_.restart, o_.n.value_or(0));
    if (!o_.n) o_.n = from.n;
    if (!o_.re && from.re > 0) o_.re = from.re;
    if (!o_.method) o_.method = from.scheme == "rk4" ? scheme::rk4 : scheme::rk3;
    if (!o_.forcing) o_.forcing = from.forcing;
  }
  if (!o_.n) o_.n = 64;
  if (!o_.re) o_.re = 1600;
  if (!o_.method) o_.method = scheme::rk3;
  if (!o_.forcing) o_.forcing = 0;
  sol_ = std::make_unique<dns::solver>(
      comm_, solver_config{.n = *o_.n, .nu = nu(), .method = *o_.method, .forcing = *o_.forcing, .fft = o_.fft});
  if (restart_) {
    const auto h = read_checkpoint(sol_->grid(), sol_->u(), o_.restart);
    sol_->set_time(h.t, h.step, h.dt);
  } else if (o_.ic == initial_condition::random) {
    random_isotropic(sol_->grid(), sol_->transformer(), o_.spectrum_peak, o_.seed, sol_->u());
  } else {
    taylor_green(sol_->grid(), sol_->transformer(), sol_->u());
  }
  sol_->invalidate();

  // series.jsonl: a fresh run starts it; a restart keeps the lines before its step.
  series_path_ = o_.out + "/series.jsonl";
  on_rank0(comm_, [&] {
    std::vector<std::string> kept;
    if (restart_) {
      std::ifstream in(series_path_);
      for (std::string line; std::getline(in, line);) {
        const json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.contains("step") || j["step"].get<std::int64_t>() >= sol_->step()) continue;
        kept.push_back(line);
        series_.push_back({j["step"].get<std::int64_t>(), j.value("t", 0.0), j.value("dt", 0.0), j.value("E", 0.0),
                           j.value("eps", 0.0), j.value("umax", 0.0), j.value("divmax", 0.0)});
      }
    }
    series_file_.open(series_path_, std::ios::trunc);
    for (const auto& l : kept) series_file_ << l << '\n';
    if (!series_file_) throw toru::error(toru::errc::io, fmt::format("--out: cannot write '{}'", series_path_));
  });

  std::sort(o_.spectra_at.begin(), o_.spectra_at.end());
  std::erase_if(o_.spectra_at, [&](double t) { return t < sol_->t() || t > o_.t_end; });
}

simulation::~simulation() = default;

void simulation::write_spectrum(double t) {
  auto ek = sol_->grid().spectrum(sol_->u());
  const std::string path = fmt::format("{}/spectrum-{:.4f}.json", o_.out, t);
  std::vector<int> shells(ek.size());
  std::iota(shells.begin(), shells.end(), 0);
  on_rank0(comm_, [&] {
    std::ofstream f(path);
    f << json{{"t", t}, {"step", sol_->step()}, {"n", *o_.n}, {"k", shells}, {"E", ek}}.dump() << '\n';
    if (!f) throw toru::error(toru::errc::io, fmt::format("--out: cannot write '{}'", path));
  });
  spectrum_files_.push_back(path);
  spectra_.emplace_back(t, std::move(ek));
}

void simulation::save(const std::string& path) const {
  write_checkpoint(sol_->grid(), sol_->u(),
                   {.t = sol_->t(),
                    .step = sol_->step(),
                    .dt = sol_->last_dt(),
                    .re = *o_.re,
                    .nu = nu(),
                    .forcing = *o_.forcing,
                    .scheme = to_string(*o_.method)},
                   path);
}

step_event simulation::step() {
  if (done_) throw toru::error(toru::errc::invalid_argument, "toru::dns::simulation::step: the run is done");
  const int rank = toru::mpi_rank(comm_);
  const double eps_time = 1e-12 * std::max(1.0, o_.t_end);
  const auto t0 = clock_type::now();
  const double f0 = sol_->fft_seconds();
  st_ = sol_->prepare();
  const double prepare_s = seconds_since(t0);
  const double prepare_fft = sol_->fft_seconds() - f0;
  // The energy is reduced over the communicator: every rank throws.
  if (!std::isfinite(st_.field.energy))
    throw toru::error(
        toru::errc::internal,
        fmt::format("the solution blew up at step {} (t = {}): reduce --cfl or --dt", sol_->step(), sol_->t()));
  step_event ev;
  ev.done = sol_->t() >= o_.t_end - eps_time || (o_.steps >= 0 && steps_run_ >= o_.steps);
  ev.record = {sol_->step(),      sol_->t(),       sol_->last_dt(), st_.field.energy, 2 * nu() * st_.field.enstrophy,
               st_.velocity.umax, st_.field.divmax};
  ev.stats_due = ev.done || steps_run_ == 0 || sol_->step() % o_.stats_every == 0;
  ev.steps_run = steps_run_;
  if (ev.stats_due && rank == 0) {
    series_.push_back(ev.record);
    series_file_ << to_json(ev.record).dump() << '\n' << std::flush;
  }
  while (next_spectrum_ < o_.spectra_at.size() && o_.spectra_at[next_spectrum_] <= sol_->t() + eps_time)
    write_spectrum(o_.spectra_at[next_spectrum_++]);
  if (steps_run_ > 0 && o_.checkpoint_every > 0 && (sol_->step() % o_.checkpoint_every == 0 || ev.done)) {
    last_checkpoint_ = fmt::format("{}/checkpoint-{}.bin", o_.out, sol_->step());
    save(last_checkpoint_);
  }
  ev.step_seconds = median(step_times_);
  ev.wall_s = seconds_since(start_);
  if (on_step_) on_step_(ev);
  if (ev.done) {
    done_ = true;
    return ev;
  }

  double dt = o_.dt > 0 ? o_.dt : sol_->cfl_dt(st_, o_.cfl);
  double target = o_.t_end;
  if (next_spectrum_ < o_.spectra_at.size()) target = std::min(target, o_.spectra_at[next_spectrum_]);
  if (target - sol_->t() <= dt * (1 + 1e-9)) dt = target - sol_->t();
  const auto t1 = clock_type::now();
  const double f1 = sol_->fft_seconds();
  sol_->advance(dt);
  double local[2] = {prepare_s + seconds_since(t1), prepare_fft + sol_->fft_seconds() - f1};
  double global[2];
  toru::check_mpi(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  step_times_.push_back(global[0]);
  fft_times_.push_back(global[1]);
  ++steps_run_;
  return ev;
}

run_summary simulation::run() {
  while (!done_) step();
  return finish();
}

run_summary simulation::finish() {
  toru::expect(done_ && !finished_, "toru::dns::simulation::finish", "a run that is done and not yet finished",
               done_ ? "finished already" : "not done");
  finished_ = true;
  if (spectra_.empty() || spectra_.back().first != sol_->t()) write_spectrum(sol_->t());

  run_summary s;
  s.tg1600 = !restart_ && o_.ic == initial_condition::taylor_green && std::abs(*o_.re - 1600) < 1e-9;
  // The series lives on rank 0; every rank gets its peak.
  double peak[2] = {0, 0};
  for (const auto& r : series_)
    if (r.eps > peak[0]) peak[0] = r.eps, peak[1] = r.t;
  toru::check_mpi(MPI_Bcast(peak, 2, MPI_DOUBLE, 0, comm_), "MPI_Bcast");
  s.peak_eps = peak[0];
  s.t_peak_eps = peak[1];
  on_rank0(comm_, [&] {
    series_file_.close();
    write_plots(o_.out, series_, spectra_, s.tg1600, *o_.n);
  });
  s.digest = sol_->grid().digest(sol_->u());

  double sum_step = 0, sum_fft = 0;
  for (std::size_t i = 0; i < step_times_.size(); ++i) sum_step += step_times_[i], sum_fft += fft_times_[i];
  s.steps_run = steps_run_;
  s.last = {sol_->step(),      sol_->t(),       sol_->last_dt(), st_.field.energy, 2 * nu() * st_.field.enstrophy,
            st_.velocity.umax, st_.field.divmax};
  s.time_per_step = median(step_times_);
  s.time_per_step_mean = step_times_.empty() ? 0.0 : sum_step / static_cast<double>(step_times_.size());
  s.fft_time_per_step = median(fft_times_);
  s.fft_share = sum_step > 0 ? sum_fft / sum_step : 0;
  s.series = series_path_;
  s.spectra = spectrum_files_;
  s.checkpoint = last_checkpoint_;
  s.plots = {o_.out + "/dissipation.svg", o_.out + "/energy.svg", o_.out + "/spectrum.svg"};
  return s;
}

}  // namespace toru::dns
