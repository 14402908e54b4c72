// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint files: round trip, atomic replacement and pruning, corruption and mismatch errors.
#include "toru/train/checkpoint.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "toru/core/error.hpp"

namespace {

using namespace toru::train;
namespace fs = std::filesystem;

struct temp_dir {
  fs::path path = fs::temp_directory_path() / ("toru-ckpt-test-" + std::to_string(::getpid()));
  ~temp_dir() { fs::remove_all(path); }
};

checkpoint_state sample(std::int64_t step) {
  checkpoint_state s;
  s.model_name = "mlp";
  s.model_signature = 12345;
  s.nranks = 3;
  s.seed = 7;
  s.global_batch = 48;
  s.step = step;
  s.epoch = step / 10;
  s.optimizer = "adam";
  s.optimizer_steps = step;
  s.settings = R"({"lr":0.001})";
  for (int i = 0; i < 1001; ++i) s.parameters.push_back(static_cast<float>(i) * 0.5f - static_cast<float>(step));
  s.buffers = {1.5f, -2.25f};
  s.optimizer_state.assign(2002, 0.125f);
  return s;
}

TEST(Checkpoint, RoundTripAndPruning) {
  temp_dir t;
  for (std::int64_t step : {10, 20, 30}) write_checkpoint(t.path, sample(step));
  const auto latest = latest_checkpoint(t.path);
  EXPECT_EQ(latest.filename(), "checkpoint-30.toru");
  const auto s = read_checkpoint(latest), want = sample(30);
  EXPECT_EQ(s.model_name, want.model_name);
  EXPECT_EQ(s.model_signature, want.model_signature);
  EXPECT_EQ(s.nranks, 3);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.step, 30);
  EXPECT_EQ(s.epoch, 3);
  EXPECT_EQ(s.optimizer_steps, 30);
  EXPECT_EQ(s.parameters, want.parameters);
  EXPECT_EQ(s.buffers, want.buffers);
  EXPECT_EQ(s.optimizer_state, want.optimizer_state);
  EXPECT_NO_THROW(check_compatible(s, want, latest));
  // The newest and the one before survive; no temporary file is left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(t.path)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint-20.toru", "checkpoint-30.toru", "latest"}));
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const toru::error& e) {
    return e.message();
  }
  return "no error";
}

TEST(Checkpoint, CorruptAndMissingFilesAreNamed) {
  temp_dir t;
  EXPECT_NE(message_of([&] { latest_checkpoint(t.path); }).find("latest: no checkpoint"), std::string::npos);
  const auto file = write_checkpoint(t.path, sample(5));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  EXPECT_NE(message_of([&] { read_checkpoint(file); }).find("CRC mismatch"), std::string::npos);
  std::ofstream(file, std::ios::binary) << "not a checkpoint at all";
  EXPECT_NE(message_of([&] { read_checkpoint(file); }).find("checkpoint-5.toru: not a toru-train checkpoint"),
            std::string::npos);
}

TEST(Checkpoint, MismatchNamesTheField) {
  const auto found = sample(1);
  auto other = found;
  other.nranks = 4;
  auto m = message_of([&] { check_compatible(found, other, "x.toru"); });
  EXPECT_NE(m.find("rank count 3, this run has 4"), std::string::npos) << m;
  other = found;
  other.model_name = "fashion-cnn";
  m = message_of([&] { check_compatible(found, other, "x.toru"); });
  EXPECT_NE(m.find("model mlp, this run has fashion-cnn"), std::string::npos) << m;
  other = found;
  other.model_signature = 1;
  EXPECT_NE(message_of([&] { check_compatible(found, other, "x.toru"); }).find("model signature"), std::string::npos);
}

TEST(Checkpoint, SignatureSeesLayout) {
  std::vector<parameter_slot> a{{.name = "fc.weight", .shape = {10, 4}, .offset = 0, .count = 40},
                                {.name = "fc.bias", .shape = {10}, .offset = 40, .count = 10}};
  const std::int64_t in[] = {1, 2, 2};
  auto b = a;
  b[0].shape = {4, 10};
  // The same layout built separately (not the same object) gives the same signature: a signature
  // of addresses or of uninitialised bytes would differ here.
  std::vector<parameter_slot> a_again{{.name = "fc.weight", .shape = {10, 4}, .offset = 0, .count = 40},
                                      {.name = "fc.bias", .shape = {10}, .offset = 40, .count = 10}};
  const std::int64_t in_again[] = {1, 2, 2};
  EXPECT_EQ(model_signature(a, in, 10, 0), model_signature(a_again, in_again, 10, 0));
  EXPECT_NE(model_signature(a, in, 10, 0), model_signature(b, in, 10, 0));
  EXPECT_NE(model_signature(a, in, 10, 0), model_signature(a, in, 9, 0));
}

}  // namespace
