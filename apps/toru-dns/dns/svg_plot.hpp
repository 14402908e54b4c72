// SPDX-License-Identifier: BSD-3-Clause
// A small line-plot writer (SVG), so every run leaves pictures without a plotting package.
#pragma once

#include <string>
#include <vector>

namespace toru::dns {

struct plot_series {
  std::string label{};
  std::vector<double> x{}, y{};
  bool markers = false;  // points instead of a line
};

struct plot_spec {
  std::string title{}, xlabel{}, ylabel{};
  bool logx = false, logy = false;
  std::vector<plot_series> series{};
};

/// The SVG text of the plot (non-positive values are dropped on log axes).
std::string svg_plot(const plot_spec& p);

/// Writes svg_plot(p) to path; false if the file could not be written.
bool write_svg_plot(const plot_spec& p, const std::string& path);

}  // namespace toru::dns
