// SPDX-License-Identifier: BSD-3-Clause
// Shared helpers for the topology tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "toru/core/error.hpp"

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
