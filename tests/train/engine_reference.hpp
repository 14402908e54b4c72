// SPDX-License-Identifier: BSD-3-Clause
// Runs tests/train/engine_reference.py (PyTorch, at test time) and returns its JSON.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace toru::test {

inline nlohmann::json engine_reference(const std::string& args) {
  const auto out = std::filesystem::temp_directory_path() /
                   ("toru-train-ref-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()) + ".json");
  const std::string cmd =
      std::string("/usr/bin/python3 ") + TORU_TRAIN_REFERENCE_SCRIPT + " " + args + " " + out.string();
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    ADD_FAILURE() << "PyTorch reference failed (" << rc << "): " << cmd;
    return {};
  }
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  std::filesystem::remove(out);
  return j;
}

}  // namespace toru::test
