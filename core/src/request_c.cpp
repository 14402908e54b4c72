// SPDX-License-Identifier: BSD-3-Clause
#include "toru/detail/c_guard.hpp"
#include "toru/detail/c_request.hpp"

namespace {
toru_result null_request(const char* call) {
  toru::detail::set_last_error(std::string(call) +
                               ": request: expected a request from a toru_*_plan_init call (toru/request.h), got NULL");
  return TORU_ERROR_INVALID_ARGUMENT;
}
}  // namespace

toru_result toru_request_start(toru_request request) {
  if (!request) return null_request("toru_request_start");
  return toru::detail::c_guarded([&] { request->r.start(); });
}

toru_result toru_request_wait(toru_request request) {
  if (!request) return null_request("toru_request_wait");
  return toru::detail::c_guarded([&] { request->r.wait(); });
}

toru_result toru_request_free(toru_request* request) {
  if (request) {
    delete *request;
    *request = nullptr;
  }
  return TORU_SUCCESS;
}
