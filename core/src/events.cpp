// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/events.hpp"

#include <dlfcn.h>

namespace toru::events {
namespace {
// A tool loaded into the process (LD_PRELOAD or linked) announces itself by this C symbol; looked up
// once, when the library holding toru's core is initialised.
sink_fn find_tool_sink() noexcept {
  void* sym = dlsym(RTLD_DEFAULT, "toru_events_sink");
  return reinterpret_cast<sink_fn>(sym);
}
}  // namespace

namespace detail {
std::atomic<sink_fn> sink{find_tool_sink()};
}

void set_sink(sink_fn fn) noexcept { detail::sink.store(fn, std::memory_order_relaxed); }

}  // namespace toru::events
