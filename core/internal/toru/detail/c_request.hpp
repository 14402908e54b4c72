// SPDX-License-Identifier: BSD-3-Clause
// The object behind a C toru_request (toru/request.h), for the modules whose *_init calls make one.
#pragma once

#include <utility>

#include "toru/core/request.hpp"
#include "toru/request.h"

struct toru_request_s {
  toru::request r;
};
