// SPDX-License-Identifier: BSD-3-Clause
// Shared helpers for the topology tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "toru/core/error.hpp"
#include "toru/topology/packet_schedules.hpp"

/// Expects `stmt` to throw toru::error whose message contains every listed fragment.
#define TORU_EXPECT_ERROR(stmt, ...)                                                  \
  do {                                                                                \
    try {                                                                             \
      stmt;                                                                           \
      ADD_FAILURE() << "expected a toru::error from: " #stmt;                         \
    } catch (const ::toru::error& e) {                                                \
      for (const std::string& frag : std::initializer_list<std::string>{__VA_ARGS__}) \
        EXPECT_NE(e.message().find(frag), std::string::npos)                          \
            << "message of " #stmt " lacks '" << frag << "': " << e.message();        \
    }                                                                                 \
  } while (0)

/// A schedule of one message of `bytes` from rank src to rank dst.
inline toru::topology::packet_schedule one_message(int src, int dst, double bytes) {
  toru::topology::packet_schedule s;
  const int a = s.add_op(src), b = s.add_op(dst);
  s.add_message(src, dst, bytes, a, b);
  return s;
}
