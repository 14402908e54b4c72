// SPDX-License-Identifier: BSD-3-Clause
// png_probe FILE X0 Y0 X1 Y1: of the pixels in [X0, X1) x [Y0, Y1) of a PNG, prints how many are
// not page background (near-white or near-grey) and how many distinct colours there are, as
// "<non-background> <total> <distinct>". Used by browser_test.sh on Chromium's screenshot.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "toru/stream/codec.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: png_probe FILE X0 Y0 X1 Y1\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::int64_t rows = 0, cols = 0;
  const auto rgb = toru::stream::decode_png(png, rows, cols);
  const long x0 = std::stol(argv[2]), y0 = std::stol(argv[3]), x1 = std::stol(argv[4]), y1 = std::stol(argv[5]);
  long busy = 0, total = 0;
  std::set<long> colours;
  for (long y = y0; y < y1 && y < rows; ++y)
    for (long x = x0; x < x1 && x < cols; ++x) {
      const auto* p = &rgb[static_cast<std::size_t>((y * cols + x) * 3)];
      const int r = std::to_integer<int>(p[0]), g = std::to_integer<int>(p[1]), b = std::to_integer<int>(p[2]);
      ++total;
      const bool grey = std::abs(r - g) < 8 && std::abs(g - b) < 8 && r > 200;
      if (!grey) ++busy;
      colours.insert((r << 16) | (g << 8) | b);
    }
  std::printf("%ld %ld %zu\n", busy, total, colours.size());
  return 0;
}
