// SPDX-License-Identifier: BSD-3-Clause
// Cuts the weights out of a serialized ONNX ModelProto before protobuf parses it. A VGG-16 export
// is 528 MB of initializer raw_data around a few hundred KB of graph; parsing copies every byte of
// it into the message (and each copy of the message copies it again), while the planner needs only
// the initializers' names, types and dims. The cut is on the protobuf wire format: the graph's
// TensorProto initializers lose their raw_data field (field 9) when it is a float tensor of at least
// `min_bytes`; every other byte is kept, and the enclosing length prefixes are rewritten.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace toru::swap::detail {

struct stripped_model {
  std::string bytes;                                // the ModelProto without the cut raw_data
  std::map<std::string, std::string_view> weights;  // initializer name -> its raw_data in the input
};

/// std::nullopt when `in` is not a well-formed ModelProto on the wire (the caller lets protobuf
/// report it). The views in `weights` point into `in`.
std::optional<stripped_model> strip_initializer_data(std::string_view in, std::size_t min_bytes = 4096);

/// A file mapped read-only: strip_initializer_data reads the graph's bytes and skips the weights,
/// so their pages are never read from disk unless values are asked for. Throws toru::error: io
/// (cannot open or map), invalid_argument (empty), naming the file.
class mapped_file {
 public:
  explicit mapped_file(const std::string& path);
  ~mapped_file();
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  std::string_view view() const noexcept { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace toru::swap::detail
