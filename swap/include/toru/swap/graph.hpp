// SPDX-License-Identifier: BSD-3-Clause
// Training-graph IR of the memory planner: tensors, ops, and the derivation of the backward and
// update ops from a forward graph.
//
// A graph is plain data (vectors of tensors and ops, indices as ids). Builders (models.hpp) and the
// ONNX importer (onnx_import.hpp) produce forward graphs; make_training_graph() appends the backward
// and update ops. Nothing here touches a device. Not thread-safe for concurrent mutation; const
// access from many threads is fine.
//
//   toru::swap::graph g = toru::swap::build_model("resnet50", {.batch = 32});
//   toru::swap::graph t = toru::swap::make_training_graph(g);
//   // t.ops: forward ops, then backward (reverse order), then one update op per parameterised layer
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toru::swap {

enum class dtype { f32, f16, bf16, i64, i32, u8 };  // u8: bool masks
/// Bytes per element.
std::int64_t size_of(dtype t) noexcept;
std::string_view to_string(dtype t) noexcept;
/// Parses "fp32"/"f32"/"float32", "fp16"/"f16"/"float16", "bf16"/"bfloat16"; throws toru::error otherwise.
dtype parse_dtype(std::string_view name);

/// Op category of the categorized topological order. `recompute` ops are clones of forward ops
/// re-run during backward (hybrid plans).
enum class category { forward, backward, update, recompute };
std::string_view to_string(category c) noexcept;

enum class tensor_kind {
  input,           // data fed to the step (images, labels): resident from the start, never swapped
  activation,      // produced by a forward or recompute op
  parameter,       // weights: persistent, never swapped
  gradient,        // gradient of an activation
  param_gradient,  // gradient of a parameter, consumed by an update op
};

/// How an executor initialises a parameter (the planner ignores it). Defaults follow PyTorch: conv
/// and linear weights and biases are uniform in [-bound, bound] with bound = 1/sqrt(fan_in) (what
/// kaiming_uniform_(a=sqrt(5)) gives); batch-norm and layer-norm scale ones, shift zeros.
enum class init_kind { none, zeros, ones, uniform };
struct tensor_init {
  init_kind kind = init_kind::none;
  double bound = 0;           // uniform: half-width
  std::vector<float> values;  // explicit initial values (ONNX initializers); overrides kind when non-empty
};

struct tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  dtype type = dtype::f32;
  std::int64_t bytes = 0;  // product of shape times size_of(type)
  tensor_kind kind = tensor_kind::activation;
  int producer = -1;           // op id; -1 for inputs and parameters
  std::vector<int> consumers;  // op ids, in insertion order
  int grad = -1;               // training graphs: id of this tensor's (accumulated) gradient
  bool requires_grad = false;  // a parameter, or depends on one
  tensor_init init;            // parameters (and constant inputs with values): how an executor fills it
  // Per axis, extent / batch where the extent scales with the batch, 0 where it does not; empty when
  // no axis does (parameters). Filled by the ONNX importer; read by rebatch().
  std::vector<std::int64_t> batch_multiple;
};

/// What an executor needs besides the shapes. Defaults are PyTorch's; spatial vectors have one entry
/// per spatial axis (empty where the op has none).
struct op_attributes {
  std::vector<std::int64_t> kernel;     // conv: kernel extents; pools: window
  std::vector<std::int64_t> stride;     // conv, pools
  std::vector<std::int64_t> pad_begin;  // conv, pools: padding before each spatial axis; pad: before every axis
  std::vector<std::int64_t> pad_end;    // and after it (ONNX pads may be asymmetric)
  double pad_value = 0;                 // pad (constant mode): the value of the added elements
  std::string pad_mode = "constant";    // pad: "constant", "reflect" (no edge repeat) or "edge" (ONNX's modes)
  std::vector<std::int64_t> dilation;   // conv
  std::int64_t groups = 1;              // conv
  bool ceil_mode = false;               // pools
  bool count_include_pad = true;        // avg pool: divide by the full window (PyTorch's default)
  double epsilon = 1e-5;                // batch norm, layer norm
  double momentum = 0.1;                // batch norm, PyTorch's convention: r = (1 - m) r + m batch
  std::int64_t axis = 1;                // concat; softmax and loss: the class axis; flatten: first flattened axis
  double p = 0;                         // dropout probability
  bool trans_b = true;                  // linear/Gemm: weight stored [out, in] (PyTorch), else [in, out]
  bool has_bias = false;                // conv, linear: the op's last input is a bias
  double clip_min = -1e300;             // clip (ReLU6: 0)
  double clip_max = 1e300;              // clip (ReLU6: 6)
  std::vector<std::int64_t> perm;       // transpose: output axis i is input axis perm[i]
  std::vector<std::int64_t> axes;       // reduce_mean: reduced axes; slice: sliced axes (non-negative)
  std::vector<std::int64_t> starts;     // slice: first index along each of `axes`; gather: constant indices
  std::vector<std::int64_t> steps;      // slice: step along each of `axes`
  double scale = 1;  // scale (Mul/Div/Add/Sub by a folded scalar): y = scale * x + shift; hardsigmoid: alpha
  double shift = 0;  // and beta: y = clamp(scale * x + shift, 0, 1)
};

struct op {
  std::string name;
  std::string type;  // "conv", "batchnorm", "relu", ... (see models.hpp)
  category cat = category::forward;
  std::vector<int> inputs;          // tensor ids
  std::vector<int> outputs;         // tensor ids
  std::vector<int> control_inputs;  // op ids that must complete first (no data)
  double flops = 0;                 // floating-point operations (a MAC counts 2)
  double bytes_touched = 0;         // bytes read and written, for the memory-bound part of the time model
  // Forward ops only, read by make_training_graph():
  std::vector<int> saved;         // tensors (inputs or outputs) the gradient op reads
  double backward_flops = 0;      // FLOPs of the gradient op when every input needs a gradient
  bool grad_passthrough = false;  // gradient of each input is the output gradient itself (add, reshape)
  int block = -1;                 // builder's natural recompute unit (residual block, ...); -1 unknown
  int forward_op = -1;            // backward/update/recompute ops: the forward op they derive from
  op_attributes attr;             // executor attributes (kernel, stride, epsilon, ...)
};

/// A graph of ops over tensors. Ops are stored in a topological order (builders append in order).
struct graph {
  std::string name;
  std::int64_t batch = 0;               // the batch the shapes are for when rebatch() can change it; 0: it cannot
  bool persistent_param_grads = false;  // training graphs: see training_options
  std::vector<tensor> tensors;
  std::vector<op> ops;

  /// Adds a tensor; bytes computed from shape and type. Every extent must be positive.
  int add_tensor(std::string name, std::vector<std::int64_t> shape, dtype type, tensor_kind kind);
  /// Adds an op and links producer/consumers; every input must exist and every output be unproduced.
  int add_op(op o);

  /// Sum of parameter bytes / element count.
  std::int64_t parameter_bytes() const;
  std::int64_t parameter_count() const;
  /// Sum of flops over the ops of one category.
  double flops(category c) const;
};

enum class optimizer { sgd, momentum, adam };

struct training_options {
  optimizer opt = optimizer::momentum;
  // Conv/linear layers with both a data and a weight gradient get two backward ops, as TensorFlow
  // (Conv2DBackpropFilter / Conv2DBackpropInput) and cuDNN (BackwardFilter / BackwardData) have
  // them: "grad_weight/f" reads the output gradient and the saved input, then "grad/f" reads the
  // output gradient and the weight (control edge from grad_weight/f). The saved input can then be
  // released (or swapped in) without coexisting with the input gradient. false: one op for both.
  bool split_weight_grad = true;
  // Parameter gradients outlive the step (PyTorch's .grad, the toru trainer's gradient buffer): they
  // are persistent state (simulate() counts them once), not objects of the step's schedule.
  bool persistent_param_grads = false;
  // Max pooling saves its input and int64 argmax indices shaped like its output ("<op>/indices", a
  // second output), as PyTorch's max_pool2d_with_indices does, instead of its input and output.
  bool maxpool_indices = false;
  // Dropout (p > 0) saves a one-byte mask shaped like its output ("<op>/mask", a second output), as
  // PyTorch's native_dropout does on a GPU.
  bool dropout_masks = false;
  // Batch normalization saves its batch mean and inverse standard deviation (float, one per channel:
  // "<op>/mean", "<op>/invstd", two more outputs), as PyTorch's native_batch_norm does. Small (about
  // 1% of a ResNet's saved bytes), but without them a count of PyTorch's saved tensors exceeds the plan.
  bool batchnorm_stats = false;
};

/// The same forward graph at another batch: every extent that tensor::batch_multiple marks is
/// rescaled, and the FLOPs and bytes of every op that touches such a tensor scale with the batch.
/// Throws toru::error (invalid_argument) for a non-positive batch or a graph with `batch == 0`.
graph rebatch(const graph& forward, std::int64_t batch);

/// Bytes of the distinct non-parameter tensors the forward ops of `g` save for their gradients: what
/// PyTorch's torch.autograd.graph.saved_tensors_hooks sees in one forward pass (each storage once).
std::int64_t saved_bytes(const graph& g);

/// Bytes of optimizer state per parameter byte (0, 1 or 2).
int optimizer_state_factor(optimizer o) noexcept;

/// Appends the backward graph and one update op per parameterised forward op to a copy of `forward`.
/// Gradient op of forward op f reads f's `saved` tensors and the gradients of f's outputs, and writes
/// the gradients of f's inputs that require one; a tensor read by several forward ops gets an `add_n`
/// accumulation op; conv/linear layers with both gradients get "grad_weight/f" and "grad/f" (see
/// training_options::split_weight_grad). The loss (an op whose outputs have no consumers, type "loss")
/// seeds the chain. Pure function, thread-safe. Throws toru::error if `forward` contains non-forward
/// ops or no loss op.
///
///   auto t = toru::swap::make_training_graph(toru::swap::build_model("resnet50", {.batch = 32}));
graph make_training_graph(const graph& forward, const training_options& options = {});

}  // namespace toru::swap
