// SPDX-License-Identifier: BSD-3-Clause
// Hardware counters through PAPI, loaded at run time (dlopen): where libpapi or the counters are
// missing (virtual machines expose none), the profile says so and nothing fails.
#pragma once

#include <nlohmann/json.hpp>

namespace toru::tune::shim {

/// Starts the counters (at MPI_Init); a no-op where PAPI or counters are missing.
void papi_start();
/// {"available": bool, "note": why not, "counters": {name: value}}: read at MPI_Finalize.
nlohmann::json papi_read();

}  // namespace toru::tune::shim
