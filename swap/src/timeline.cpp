// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/xml.hpp"

namespace toru::swap {
namespace {

const char* colour(category c) {
  switch (c) {
    case category::forward:
      return "#4c72b0";
    case category::backward:
      return "#dd8452";
    case category::update:
      return "#55a868";
    case category::recompute:
      return "#c44e52";
  }
  return "#888";
}

}  // namespace

std::string timeline_svg(const plan& p, const sim_result& r, const std::string& title) {
  if (r.trace.empty() || r.memory.empty())
    throw error(errc::invalid_argument, "timeline: expected a sim_result recorded with record_trace = true, got none");
  const double width = 1200, left = 110, right = 20, plot_w = width - left - right;
  const double mem_top = 50, mem_h = 220, lane_h = 26, lane_gap = 12;
  const double lanes_top = mem_top + mem_h + 40;
  const double height = lanes_top + 3 * (lane_h + lane_gap) + 60;
  const double tmax = std::max(r.step_seconds, 1e-12);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double mmax = std::max<double>(static_cast<double>(std::max(r.peak_bytes, r.budget_bytes)), 1) * 1.05;
  auto x = [&](double t) { return left + plot_w * t / tmax; };
  auto y = [&](double b) { return mem_top + mem_h * (1 - b / mmax); };

  std::string s;
  s += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n",
      width, height);
  s += fmt::format("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  s += fmt::format("<text x=\"{:.0f}\" y=\"22\" font-size=\"15\">{}</text>\n", left, xml_escape(title));
  s += fmt::format(
      "<text x=\"{:.0f}\" y=\"40\">step {:.4g} s, bound {:.4g} s ({:.0f}% of bound), peak {:.2f} GiB of {:.2f} GiB "
      "budget, "
      "stalls {:.4g} s, swapped out {:.2f} GiB, in {:.2f} GiB</text>\n",
      left, r.step_seconds, r.bound_seconds, r.percent_of_bound(), static_cast<double>(r.peak_bytes) / gib,
      static_cast<double>(r.budget_bytes) / gib, r.stall_seconds, static_cast<double>(r.swapped_out_bytes) / gib,
      static_cast<double>(r.swapped_in_bytes) / gib);
  // Memory panel: axes, ticks, budget, step curve.
  s += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#999\"/>\n", left,
      mem_top, plot_w, mem_h);
  for (int i = 0; i <= 4; ++i) {
    const double b = mmax * i / 4;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.1f} GiB</text>\n", left - 6, y(b) + 4,
                     b / gib);
  }
  s += fmt::format("<text x=\"10\" y=\"{:.1f}\">memory</text>\n", mem_top + mem_h / 2);
  s += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"red\" stroke-dasharray=\"6,4\"/>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"red\" text-anchor=\"end\">budget</text>\n",
      left, y(static_cast<double>(r.budget_bytes)), left + plot_w, y(static_cast<double>(r.budget_bytes)),
      left + plot_w - 4, y(static_cast<double>(r.budget_bytes)) - 4);
  std::string path = fmt::format("M{:.1f},{:.1f}", x(0), y(static_cast<double>(r.memory.front().second)));
  for (const auto& [t, b] : r.memory) path += fmt::format(" H{:.1f} V{:.1f}", x(t), y(static_cast<double>(b)));
  path += fmt::format(" H{:.1f}", x(tmax));
  s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.2\"/>\n", path);
  // Lanes.
  const char* names[3] = {"compute", "device→host", "host→device"};
  for (int q = 0; q < 3; ++q) {
    const double top = lanes_top + q * (lane_h + lane_gap);
    s += fmt::format("<text x=\"10\" y=\"{:.1f}\">{}</text>\n", top + lane_h * 0.65, names[q]);
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#f4f4f4\"/>\n", left,
                     top, plot_w, lane_h);
  }
  for (const auto& e : r.trace) {
    const double top = lanes_top + e.queue * (lane_h + lane_gap);
    const double w = std::max(0.3, x(e.end) - x(e.start));
    std::string label;
    const graph& g = *p.g;
    if (e.queue == 0) {
      label = g.ops[e.op].name;
    } else {
      label = g.tensors[p.objects[e.object].tensor].name;
    }
    const char* fill = e.queue == 0 ? colour(e.cat) : (e.queue == 1 ? "#8172b3" : "#937860");
    s += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} {:.4g}-{:.4g} "
        "s</title></rect>\n",
        x(e.start), top, w, lane_h, fill, xml_escape(label), e.start, e.end);
  }
  // Time axis and legend.
  const double axis_y = lanes_top + 3 * (lane_h + lane_gap) + 4;
  for (int i = 0; i <= 10; ++i) {
    const double t = tmax * i / 10;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g} s</text>\n", x(t), axis_y + 12, t);
  }
  double lx = left;
  for (auto c : {category::forward, category::backward, category::update, category::recompute}) {
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}</text>\n",
        lx, axis_y + 24, colour(c), lx + 16, axis_y + 34, to_string(c));
    lx += 110;
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">gaps in the compute lane are stalls on copies</text>\n", lx + 20,
                   axis_y + 34);
  s += "</svg>\n";
  return s;
}

}  // namespace toru::swap
