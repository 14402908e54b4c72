// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/data.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::train {

std::int64_t dataset::sample_elements() const {
  const auto s = sample_shape();
  return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>());
}

namespace {

std::vector<unsigned char> gunzip(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw error(errc::io, fmt::format("{}: no such file (Fashion-MNIST: install Debian's dataset-fashion-mnist or "
                                      "pass the directory holding the four *-ubyte.gz files)",
                                      file.string()));
  gzFile gz = gzopen(file.c_str(), "rb");
  if (gz == nullptr) throw error(errc::io, fmt::format("{}: cannot open", file.string()));
  std::vector<unsigned char> out;
  std::vector<unsigned char> chunk(1 << 20);
  for (;;) {
    const int got = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got < 0) {
      int code = 0;
      std::string why = gzerror(gz, &code);
      gzclose(gz);
      throw error(errc::io, fmt::format("{}: corrupt gzip data ({})", file.string(), why));
    }
    if (got == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + got);
  }
  // gzread reads a non-gzip file through unchanged; IDX magic checks catch that. A truncated gzip
  // stream ends without error from gzread but gzclose_r reports it.
  const int rc = gzclose(gz);
  if (rc != Z_OK && rc != Z_BUF_ERROR) throw error(errc::io, fmt::format("{}: corrupt gzip stream", file.string()));
  if (rc == Z_BUF_ERROR) throw error(errc::io, fmt::format("{}: truncated gzip stream", file.string()));
  return out;
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// An IDX file: magic 0x00 0x00 <type 0x08 = ubyte> <ndims>, then ndims big-endian extents.
std::vector<std::int64_t> idx_dims(const std::vector<unsigned char>& bytes, const std::filesystem::path& file,
                                   int ndims) {
  auto bad = [&](const std::string& what) {
    return error(errc::invalid_argument, fmt::format("{}: not a Fashion-MNIST IDX file: {}", file.string(), what));
  };
  if (bytes.size() < 4) throw bad(fmt::format("{} bytes, shorter than its magic number", bytes.size()));
  if (bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 || bytes[3] != ndims)
    throw bad(fmt::format("magic {:02x}{:02x}{:02x}{:02x}, expected 000008{:02x} (unsigned bytes, {} dimensions)",
                          bytes[0], bytes[1], bytes[2], bytes[3], ndims, ndims));
  if (bytes.size() < 4u + 4u * ndims) throw bad(fmt::format("{} bytes, shorter than its header", bytes.size()));
  std::vector<std::int64_t> dims;
  std::int64_t payload = 1;
  for (int d = 0; d < ndims; ++d) {
    dims.push_back(be32(&bytes[4 + 4 * d]));
    payload *= dims.back();
  }
  const auto expected = static_cast<std::int64_t>(4 + 4 * ndims) + payload;
  if (static_cast<std::int64_t>(bytes.size()) != expected)
    throw bad(fmt::format("{} bytes, its header announces {}", bytes.size(), expected));
  return dims;
}

class fashion_mnist final : public dataset {
 public:
  fashion_mnist(const std::filesystem::path& dir, split which, normalization norm) : norm_(norm) {
    const std::string prefix = which == split::train ? "train" : "t10k";
    const auto image_file = dir / (prefix + "-images-idx3-ubyte.gz");
    const auto label_file = dir / (prefix + "-labels-idx1-ubyte.gz");
    images_ = gunzip(image_file);
    labels_ = gunzip(label_file);
    const auto idims = idx_dims(images_, image_file, 3);
    const auto ldims = idx_dims(labels_, label_file, 1);
    if (idims[1] != 28 || idims[2] != 28)
      throw error(errc::invalid_argument,
                  fmt::format("{}: images of {}x{}, expected 28x28", image_file.string(), idims[1], idims[2]));
    if (idims[0] != ldims[0])
      throw error(errc::invalid_argument, fmt::format("{} holds {} images but {} holds {} labels", image_file.string(),
                                                      idims[0], label_file.string(), ldims[0]));
    count_ = idims[0];
    for (std::int64_t i = 0; i < count_; ++i)
      if (labels_[8 + i] >= 10)
        throw error(errc::invalid_argument, fmt::format("{}: label {} of sample {}, expected 0..9", label_file.string(),
                                                        int{labels_[8 + i]}, i));
    if (norm.std) expect(*norm.std > 0, "normalization std", "> 0", fmt::format("{}", *norm.std));
  }
  std::int64_t size() const override { return count_; }
  std::vector<std::int64_t> sample_shape() const override { return {1, 28, 28}; }
  int classes() const override { return 10; }
  void read(std::span<const std::int64_t> indices, std::span<float> images,
            std::span<std::int32_t> labels) const override {
    constexpr std::size_t pixels = 28 * 28;
    expect(images.size() == indices.size() * pixels, "images", fmt::format("{} floats", indices.size() * pixels),
           std::to_string(images.size()));
    expect(labels.size() == indices.size(), "labels", fmt::format("{} ints", indices.size()),
           std::to_string(labels.size()));
    const float mean = norm_.mean.value_or(0.0f), sd = norm_.std.value_or(1.0f);
    const bool normalize = norm_.mean || norm_.std;
    for (std::size_t s = 0; s < indices.size(); ++s) {
      const auto i = indices[s];
      expect(i >= 0 && i < count_, "sample index", fmt::format("0..{}", count_ - 1), std::to_string(i));
      const unsigned char* src = images_.data() + 16 + static_cast<std::size_t>(i) * pixels;
      float* dst = images.data() + s * pixels;
      // torchvision: ToTensor divides by 255 in float, Normalize subtracts then divides.
      for (std::size_t k = 0; k < pixels; ++k) {
        float x = static_cast<float>(src[k]) / 255.0f;
        if (normalize) x = (x - mean) / sd;
        dst[k] = x;
      }
      labels[s] = labels_[8 + static_cast<std::size_t>(i)];
    }
  }

 private:
  normalization norm_;
  std::vector<unsigned char> images_, labels_;
  std::int64_t count_ = 0;
};

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class synthetic final : public dataset {
 public:
  synthetic(std::vector<std::int64_t> shape, int classes, std::int64_t count, std::uint64_t seed)
      : shape_(std::move(shape)), classes_(classes), count_(count), seed_(seed) {
    expect(!shape_.empty(), "synthetic sample shape", "at least one extent", "none");
    for (auto e : shape_) expect(e > 0, "synthetic sample shape", "positive extents", std::to_string(e));
    expect(classes > 0, "synthetic classes", "> 0", std::to_string(classes));
    expect(count > 0, "synthetic sample count", "> 0", std::to_string(count));
    elements_ = sample_elements();
  }
  std::int64_t size() const override { return count_; }
  std::vector<std::int64_t> sample_shape() const override { return shape_; }
  int classes() const override { return classes_; }
  void read(std::span<const std::int64_t> indices, std::span<float> images,
            std::span<std::int32_t> labels) const override {
    const auto n = static_cast<std::size_t>(elements_);
    expect(images.size() == indices.size() * n, "images", fmt::format("{} floats", indices.size() * n),
           std::to_string(images.size()));
    expect(labels.size() == indices.size(), "labels", fmt::format("{} ints", indices.size()),
           std::to_string(labels.size()));
    for (std::size_t s = 0; s < indices.size(); ++s) {
      const auto i = static_cast<std::uint64_t>(indices[s]);
      const std::uint64_t base = splitmix64(seed_ ^ splitmix64(i));
      labels[s] = static_cast<std::int32_t>(splitmix64(base) % static_cast<std::uint64_t>(classes_));
      float* dst = images.data() + s * n;
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t r = splitmix64(base + 1 + k);
        dst[k] = static_cast<float>(static_cast<double>(r >> 40) * 0x1.0p-23 - 1.0);  // 24 bits: exact in float
      }
    }
  }

 private:
  std::vector<std::int64_t> shape_;
  int classes_;
  std::int64_t count_, elements_ = 0;
  std::uint64_t seed_;
};

}  // namespace

std::unique_ptr<dataset> open_fashion_mnist(const std::filesystem::path& dir, split which, normalization norm) {
  return std::make_unique<fashion_mnist>(dir, which, norm);
}

std::unique_ptr<dataset> make_synthetic(std::vector<std::int64_t> sample_shape, int classes, std::int64_t count,
                                        std::uint64_t seed) {
  return std::make_unique<synthetic>(std::move(sample_shape), classes, count, seed);
}

sample_order::sample_order(std::int64_t dataset_size, std::int64_t global_batch, std::uint64_t seed, bool shuffle)
    : size_(dataset_size), batch_(global_batch), steps_per_epoch_(0), seed_(seed), shuffle_(shuffle) {
  expect(global_batch >= 1, "batch", ">= 1", std::to_string(global_batch));
  expect(global_batch <= dataset_size, "batch", fmt::format("at most the dataset's {} samples", dataset_size),
         std::to_string(global_batch));
  steps_per_epoch_ = dataset_size / global_batch;
}

const std::vector<std::int64_t>& sample_order::permutation(std::int64_t epoch) const {
  if (epoch != cached_epoch_) {
    cached_.resize(static_cast<std::size_t>(size_));
    std::iota(cached_.begin(), cached_.end(), std::int64_t{0});
    if (shuffle_) {
      // Fisher-Yates with mt19937_64 and a modulo draw written out here: std::shuffle and the
      // standard distributions are implementation-defined, this order must not be.
      std::mt19937_64 rng(splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(epoch) + 0x5151)));
      for (std::int64_t i = size_ - 1; i > 0; --i) {
        const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i + 1));
        std::swap(cached_[static_cast<std::size_t>(i)], cached_[static_cast<std::size_t>(j)]);
      }
    }
    cached_epoch_ = epoch;
  }
  return cached_;
}

std::vector<std::int64_t> sample_order::batch(std::int64_t epoch, std::int64_t step) const {
  expect(step >= 0 && step < steps_per_epoch_, "step", fmt::format("0..{}", steps_per_epoch_ - 1),
         std::to_string(step));
  const auto& p = permutation(epoch);
  const auto first = p.begin() + step * batch_;
  return {first, first + batch_};
}

std::vector<std::int64_t> sample_order::shard(std::int64_t epoch, std::int64_t step, int rank, int nranks) const {
  expect(nranks >= 1 && batch_ % nranks == 0, "batch", fmt::format("divisible by the {} ranks", nranks),
         std::to_string(batch_));
  expect(step >= 0 && step < steps_per_epoch_, "step", fmt::format("0..{}", steps_per_epoch_ - 1),
         std::to_string(step));
  const auto local = batch_ / nranks;
  const auto& p = permutation(epoch);
  const auto first = p.begin() + step * batch_ + rank * local;
  return {first, first + local};
}

}  // namespace toru::train
