// SPDX-License-Identifier: BSD-3-Clause
// Training data: Fashion-MNIST from its IDX files, seeded synthetic images of any shape, and the
// global sample order that makes a data-parallel run see exactly what a one-rank run sees.
//
// Order: each epoch is one permutation of the dataset, drawn from (seed, epoch); global batch b of
// the epoch is samples [b*B, (b+1)*B) of it (the incomplete tail is dropped, as torch's
// drop_last=True), and rank r of P takes the contiguous shard [r*B/P, (r+1)*B/P) of every batch.
// The order is a pure function of (seed, epoch, step): the only data position a checkpoint needs
// is the step.
//
//   auto train = toru::train::open_fashion_mnist("/usr/share/datasets/fashion-mnist", toru::train::split::train);
//   toru::train::sample_order order(train->size(), 64, seed);
//   auto idx = order.shard(epoch, step, rank, nranks);
//   train->read(idx, images, labels);
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace toru::train {

/// A labelled image set. read() is const and thread-safe.
class dataset {
 public:
  virtual ~dataset() = default;
  virtual std::int64_t size() const = 0;
  /// One sample's shape, e.g. {1, 28, 28} (channels, height, width).
  virtual std::vector<std::int64_t> sample_shape() const = 0;
  virtual int classes() const = 0;
  /// Fills images (indices.size() * prod(sample_shape()) floats) and labels (indices.size()) with
  /// the samples `indices`, in that order.
  virtual void read(std::span<const std::int64_t> indices, std::span<float> images,
                    std::span<std::int32_t> labels) const = 0;
  std::int64_t sample_elements() const;
};

enum class split { train, test };

/// torchvision's ToTensor (x / 255) followed, when given, by Normalize(mean, std).
struct normalization {
  std::optional<float> mean;
  std::optional<float> std;
};
/// The Fashion-MNIST training set's statistics (after ToTensor), the usual Normalize arguments.
inline constexpr normalization fashion_mnist_normalization{0.2860f, 0.3530f};

/// Debian's dataset-fashion-mnist installs here.
inline constexpr const char* default_fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";

/// Reads <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz (gzip'd IDX). Each process
/// decompresses the files (gzip has no random access) and keeps the bytes; read() converts only
/// the samples asked for. Throws toru::error(errc::io) naming the file when it is missing,
/// unreadable, truncated or not gzip, and errc::invalid_argument naming it when its IDX magic,
/// dimensions (28x28 images, labels in [0, 10)) or counts (images vs labels) are wrong.
std::unique_ptr<dataset> open_fashion_mnist(const std::filesystem::path& dir, split which, normalization norm = {});

/// `count` samples of shape `sample_shape`, values uniform in [-1, 1) and labels uniform in
/// [0, classes), each a pure function of (seed, sample index, element): any rank can generate any
/// sample. For throughput runs of the large models, where the data do not matter.
std::unique_ptr<dataset> make_synthetic(std::vector<std::int64_t> sample_shape, int classes, std::int64_t count,
                                        std::uint64_t seed);

/// The global sample order (see the file comment). Cheap to copy; permutations are computed on
/// demand and the last one is cached.
class sample_order {
 public:
  /// Throws errc::invalid_argument when global_batch < 1 or larger than the dataset.
  sample_order(std::int64_t dataset_size, std::int64_t global_batch, std::uint64_t seed, bool shuffle = true);
  std::int64_t steps_per_epoch() const noexcept { return steps_per_epoch_; }
  std::int64_t global_batch() const noexcept { return batch_; }
  /// Samples of global batch `step` (0-based within the epoch) of `epoch`.
  std::vector<std::int64_t> batch(std::int64_t epoch, std::int64_t step) const;
  /// Rank `rank`'s contiguous share of it; global_batch must be divisible by nranks.
  std::vector<std::int64_t> shard(std::int64_t epoch, std::int64_t step, int rank, int nranks) const;
  /// The whole permutation of `epoch` (identity without shuffling).
  const std::vector<std::int64_t>& permutation(std::int64_t epoch) const;

 private:
  std::int64_t size_, batch_, steps_per_epoch_;
  std::uint64_t seed_;
  bool shuffle_;
  mutable std::int64_t cached_epoch_ = -1;
  mutable std::vector<std::int64_t> cached_;
};

}  // namespace toru::train
