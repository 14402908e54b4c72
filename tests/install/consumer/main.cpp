// SPDX-License-Identifier: BSD-3-Clause
// A downstream code using the installed toru package.
#include <cstdio>

#include <toru/config.hpp>
#include <toru/topology/network_model.hpp>
#include <toru/topology/torus.hpp>

int main(int argc, char** argv) {
  const auto torus = toru::topology::torus::parse(argc > 1 ? argv[1] : "4x4x8");
  const double bound = toru::topology::alltoall_bound(torus, 65536.0);
  std::printf("toru %s: %s, longest axis %d, all-to-all bound %.6g s\n", TORU_VERSION_STRING, torus.to_string().c_str(),
              torus.longest_axis(), bound);
  return bound > 0 ? 0 : 1;
}
