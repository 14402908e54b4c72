// SPDX-License-Identifier: BSD-3-Clause
// Fashion-MNIST reading against torchvision's transforms, bad files, and the global sample order.
#include "toru/train/data.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine_reference.hpp"
#include "toru/core/error.hpp"

namespace {

using namespace toru::train;
namespace fs = std::filesystem;

TEST(FashionMnist, MatchesTorchvision) {
  const auto ref = toru::test::engine_reference(std::string("fashion ") + default_fashion_mnist_dir);
  ASSERT_TRUE(ref.contains("samples"));
  const auto plain = open_fashion_mnist(default_fashion_mnist_dir, split::train);
  const auto norm = open_fashion_mnist(default_fashion_mnist_dir, split::train, fashion_mnist_normalization);
  EXPECT_EQ(plain->size(), ref["count"].get<std::int64_t>());
  EXPECT_EQ(plain->sample_elements(), 784);
  EXPECT_EQ(open_fashion_mnist(default_fashion_mnist_dir, split::test)->size(), 10000);
  for (const auto& s : ref["samples"]) {
    const std::int64_t idx[] = {s["index"].get<std::int64_t>()};
    std::vector<float> a(784), b(784);
    std::int32_t la = -1, lb = -1;
    plain->read(idx, a, {&la, 1});
    norm->read(idx, b, {&lb, 1});
    EXPECT_EQ(la, s["label"].get<int>());
    EXPECT_EQ(lb, la);
    const auto want_a = s["plain"].get<std::vector<float>>(), want_b = s["normalized"].get<std::vector<float>>();
    for (int k = 0; k < 784; ++k) {
      EXPECT_EQ(a[k], want_a[k]) << "ToTensor, sample " << idx[0] << " pixel " << k;
      EXPECT_NEAR(b[k], want_b[k], 1e-6f) << "Normalize, sample " << idx[0] << " pixel " << k;
    }
  }
}

struct temp_dir {
  fs::path path = fs::temp_directory_path() / ("toru-data-test-" + std::to_string(::getpid()));
  temp_dir() { fs::create_directories(path); }
  ~temp_dir() { fs::remove_all(path); }
};

void write_gz(const fs::path& file, const std::string& bytes) {
  gzFile gz = gzopen(file.c_str(), "wb");
  gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(gz);
}

std::string error_of(const fs::path& dir) {
  try {
    open_fashion_mnist(dir, split::test);
  } catch (const toru::error& e) {
    return e.message();
  }
  return "no error";
}

TEST(FashionMnist, MissingOrCorruptFilesNameTheFile) {
  temp_dir t;
  EXPECT_NE(error_of(t.path).find("t10k-images-idx3-ubyte.gz: no such file"), std::string::npos) << error_of(t.path);
  const auto images = t.path / "t10k-images-idx3-ubyte.gz", labels = t.path / "t10k-labels-idx1-ubyte.gz";
  // Wrong magic.
  write_gz(images, std::string("\x00\x00\x08\x01\x00\x00\x00\x01x", 9));
  write_gz(labels, std::string("\x00\x00\x08\x01\x00\x00\x00\x01\x03", 9));
  EXPECT_NE(error_of(t.path).find("t10k-images-idx3-ubyte.gz: not a Fashion-MNIST IDX file: magic"), std::string::npos)
      << error_of(t.path);
  // Header announcing more than the file holds.
  write_gz(images, std::string("\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x1c\x00\x00\x00\x1c", 16) +
                       std::string(784, '\x01'));
  EXPECT_NE(error_of(t.path).find("t10k-images-idx3-ubyte.gz: not a Fashion-MNIST IDX file: 800 bytes"),
            std::string::npos)
      << error_of(t.path);
  // Counts that disagree between images and labels.
  write_gz(images, std::string("\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x1c\x00\x00\x00\x1c", 16) +
                       std::string(2 * 784, '\x01'));
  EXPECT_NE(error_of(t.path).find("holds 2 images but"), std::string::npos) << error_of(t.path);
  // A truncated gzip stream.
  {
    std::ifstream in(std::string(default_fashion_mnist_dir) + "/t10k-labels-idx1-ubyte.gz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(labels, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_NE(error_of(t.path).find("t10k-labels-idx1-ubyte.gz: "), std::string::npos) << error_of(t.path);
}

TEST(SampleOrder, SameGlobalOrderForAnyRankCount) {
  const sample_order order(1000, 60, 42);
  EXPECT_EQ(order.steps_per_epoch(), 16);  // 1000 / 60, the incomplete tail dropped
  auto p0 = order.permutation(0);
  auto sorted = p0;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i);
  EXPECT_NE(order.permutation(1), p0);                                         // reshuffled every epoch
  EXPECT_EQ(sample_order(1000, 60, 42).permutation(1), order.permutation(1));  // from the seed alone
  EXPECT_NE(sample_order(1000, 60, 43).permutation(1), order.permutation(1));
  for (int nranks : {1, 2, 3, 4, 5}) {
    std::vector<std::int64_t> joined;
    for (int r = 0; r < nranks; ++r) {
      const auto s = order.shard(3, 7, r, nranks);
      joined.insert(joined.end(), s.begin(), s.end());
    }
    EXPECT_EQ(joined, order.batch(3, 7)) << nranks << " ranks";
  }
  EXPECT_THROW(order.shard(0, 0, 0, 7), toru::error);  // 60 not divisible by 7
  EXPECT_THROW(sample_order(10, 11, 1), toru::error);
  EXPECT_EQ(sample_order(10, 5, 1, false).batch(4, 1), (std::vector<std::int64_t>{5, 6, 7, 8, 9}));
}

TEST(Synthetic, PureFunctionOfSeedAndIndex) {
  const auto a = make_synthetic({3, 5, 7}, 10, 100, 9), b = make_synthetic({3, 5, 7}, 10, 100, 9);
  const std::int64_t one[] = {17}, two[] = {3, 17};
  std::vector<float> x(105), y(210);
  std::int32_t lx = 0, ly[2] = {0, 0};
  a->read(one, x, {&lx, 1});
  b->read(two, y, ly);
  EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin() + 105));
  EXPECT_EQ(lx, ly[1]);
  EXPECT_TRUE(std::all_of(x.begin(), x.end(), [](float v) { return v >= -1 && v < 1; }));
  EXPECT_FALSE(std::equal(x.begin(), x.end(), y.begin()));
  std::set<std::int32_t> labels;
  std::vector<std::int64_t> all(100);
  std::iota(all.begin(), all.end(), 0);
  std::vector<float> big(100 * 105);
  std::vector<std::int32_t> lab(100);
  a->read(all, big, lab);
  labels.insert(lab.begin(), lab.end());
  EXPECT_EQ(labels.size(), 10u);
}

}  // namespace
