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

}  // namespace toru::swap::detail
