// SPDX-License-Identifier: BSD-3-Clause
#include "dns/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "toru/core/xml.hpp"

namespace toru::dns {
namespace {

constexpr double width = 720, height = 460, left = 80, right = 180, top = 40, bottom = 60;
const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

struct axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v, double a, double b) const {
    const double x = log ? std::log10(v) : v;
    return a + (x - lo) / (hi - lo) * (b - a);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      // Short ranges (a spectrum over k = 1..40) also get 2 and 5 in every decade.
      const bool fine = hi - lo < 2.5;
      for (double e = std::floor(lo); e <= hi + 1e-9; e += std::max(1.0, std::floor((hi - lo) / 6)))
        for (double m : {1.0, 2.0, 5.0}) {
          if (m > 1 && !fine) break;
          const double v = m * std::pow(10, e), lv = std::log10(v);
          if (lv >= lo - 1e-9 && lv <= hi + 1e-9) t.push_back(v);
        }
      return t;
    }
    const double raw = (hi - lo) / 6, mag = std::pow(10, std::floor(std::log10(raw)));
    const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) t.push_back(v);
    return t;
  }
};

axis fit(const std::vector<const std::vector<double>*>& data, bool log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto* v : data)
    for (double x : *v) {
      if (!std::isfinite(x) || (log && x <= 0)) continue;
      const double y = log ? std::log10(x) : x;
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12) lo -= 0.5, hi += 0.5;
  if (!log) {
    const double pad = 0.04 * (hi - lo);
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  return {lo, hi, log};
}

}  // namespace

std::string svg_plot(const plot_spec& p) {
  std::vector<const std::vector<double>*> xs, ys;
  for (const auto& s : p.series) {
    xs.push_back(&s.x);
    ys.push_back(&s.y);
  }
  const axis ax = fit(xs, p.logx), ay = fit(ys, p.logy);
  const double x0 = left, x1 = width - right, y0 = height - bottom, y1 = top;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height);
  out += fmt::format("<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n", (x0 + x1) / 2,
                     xml_escape(p.title));
  auto label = [](double v, bool log) {
    const double e = std::round(std::log10(v));
    const bool decade = std::abs(v - std::pow(10, e)) < 1e-9 * v;
    return log && decade && std::abs(e) > 2 ? fmt::format("1e{}", static_cast<int>(e)) : fmt::format("{:.4g}", v);
  };
  for (double t : ax.ticks()) {
    const double x = ax.map(t, x0, x1);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ddd\"/>\n", x, y0, x, y1);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, y0 + 16, label(t, ax.log));
  }
  for (double t : ay.ticks()) {
    const double y = ay.map(t, y0, y1);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", x0, y, x1, y);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", x0 - 6, y + 4, label(t, ay.log));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", x0, y1,
                     x1 - x0, y0 - y1);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (x0 + x1) / 2, height - 18,
                     xml_escape(p.xlabel));
  out += fmt::format("<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">{}</text>\n",
                     (y0 + y1) / 2, (y0 + y1) / 2, xml_escape(p.ylabel));
  for (std::size_t s = 0; s < p.series.size(); ++s) {
    const auto& ser = p.series[s];
    const char* color = colors[s % std::size(colors)];
    std::string points;
    for (std::size_t i = 0; i < std::min(ser.x.size(), ser.y.size()); ++i) {
      if ((p.logx && ser.x[i] <= 0) || (p.logy && ser.y[i] <= 0) || !std::isfinite(ser.y[i])) continue;
      const double x = ax.map(ser.x[i], x0, x1), y = ay.map(ser.y[i], y0, y1);
      if (ser.markers)
        out += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", x, y,
            color);
      else
        points += fmt::format("{:.1f},{:.1f} ", x, y);
    }
    if (!points.empty())
      out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"/>\n", points, color);
    const double ly = y1 + 16 + 18 * static_cast<double>(s);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"/>\n", x1 + 10,
                       ly, x1 + 30, ly, color);
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", x1 + 36, ly + 4, xml_escape(ser.label));
  }
  out += "</svg>\n";
  return out;
}

bool write_svg_plot(const plot_spec& p, const std::string& path) {
  std::ofstream f(path);
  f << svg_plot(p);
  return static_cast<bool>(f);
}

}  // namespace toru::dns
