// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/request.hpp"

#include <utility>

#include "toru/core/error.hpp"
#include "toru/detail/split_phase.hpp"

namespace toru {

request::request() noexcept = default;
request::request(std::string what, std::function<void()> work)
    : what_(std::move(what)), work_(std::move(work)), phase_(std::make_unique<detail::split_phase>()) {}
request::~request() = default;
request::request(request&&) noexcept = default;

// The call in flight runs its own copy of the work: replacing work_ before phase_ (which joins it) is safe.
request& request::operator=(request&&) noexcept = default;

void request::start() {
  if (!work_)
    throw error(errc::invalid_argument, "toru::request::start: the request is empty (made by no *_init call)");
  phase_->start(what_, work_);
}

void request::wait() {
  if (!work_) throw error(errc::invalid_argument, "toru::request::wait: the request is empty (made by no *_init call)");
  phase_->wait(what_);
}

void request::run() {
  start();
  wait();
}

bool request::active() const noexcept { return phase_ && phase_->in_flight(); }

}  // namespace toru
