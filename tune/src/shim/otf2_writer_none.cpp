// SPDX-License-Identifier: BSD-3-Clause
#include <stdexcept>

#include "otf2_writer.hpp"

namespace toru::tune::shim {

void write_otf2(const std::vector<rank_data>&, const nlohmann::json&, const std::string&) {
  throw std::runtime_error("this libtoru_tune_pmpi was built without OTF2 (libotf2-trace-dev): no trace written");
}

}  // namespace toru::tune::shim
