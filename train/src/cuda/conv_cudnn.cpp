// SPDX-License-Identifier: BSD-3-Clause
// Convolution on cuDNN (layers.hpp). The algorithm of each direction is chosen once per shape, when
// the layer is built, from cuDNN's heuristic ranking.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

namespace {

// The first acceptable entry of a heuristic ranking: not a tensor-core (TF32) entry, supported by
// the descriptor as configured (FMA math: its workspace query succeeds, and that size, not the
// ranking's estimate, is what we allocate), within max_workspace, and preferably deterministic (two
// runs with the same seed must be bit-identical; cuDNN's atomics-based algorithms are not).
// `workspace(algo, &bytes)` is the direction's cudnnGet*WorkspaceSize.
template <class Perf, class Workspace>
bool choose(const Perf* perf, int returned, Workspace workspace, decltype(Perf::algo)& algo, std::size_t& bytes) {
  bool found = false;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.mathType == CUDNN_TENSOR_OP_MATH ||
        p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      continue;
    std::size_t need = 0;
    if (workspace(p.algo, &need) != CUDNN_STATUS_SUCCESS || need > conv2d_cudnn::max_workspace) continue;
    if (p.determinism == CUDNN_DETERMINISTIC) {
      algo = p.algo, bytes = need;
      return true;
    }
    if (!found) algo = p.algo, bytes = need, found = true;
  }
  return found;
}

std::string describe(const conv2d_shape& s) {
  return fmt::format("conv2d x [{}, {}, {}, {}], {} filters {}x{}, stride {}x{}, pad {}x{}, dilation {}x{}, groups {}",
                     s.x[0], s.x[1], s.x[2], s.x[3], s.out_channels, s.kernel[0], s.kernel[1], s.stride[0], s.stride[1],
                     s.pad[0], s.pad[1], s.dilation[0], s.dilation[1], s.groups);
}

[[noreturn]] void no_algorithm(const conv2d_shape& s, const char* direction) {
  throw error(errc::unsupported,
              fmt::format("{}: cuDNN offers no FMA (non-TF32) {} algorithm within {} bytes of workspace", describe(s),
                          direction, conv2d_cudnn::max_workspace));
}

}  // namespace

conv2d_cudnn::conv2d_cudnn(cuda_context& ctx, const conv2d_shape& s) : ctx_(&ctx), s_(s) {
  if (s.groups < 1 || s.x[1] % s.groups != 0 || s.out_channels % s.groups != 0)
    throw error(errc::invalid_argument,
                fmt::format("{}: groups must divide the input and output channels", describe(s)));
  set_nchw(x_, s.x);
  check_cudnn(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.out_channels, s.x[1] / s.groups,
                                         s.kernel[0], s.kernel[1]),
              "cudnnSetFilter4dDescriptor");
  check_cudnn(cudnnSetConvolution2dDescriptor(conv_, s.pad[0], s.pad[1], s.stride[0], s.stride[1], s.dilation[0],
                                              s.dilation[1], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "cudnnSetConvolution2dDescriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(conv_, s.groups), "cudnnSetConvolutionGroupCount");
  check_cudnn(cudnnSetConvolutionMathType(conv_, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  check_cudnn(
      cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &y_shape_[0], &y_shape_[1], &y_shape_[2], &y_shape_[3]),
      "cudnnGetConvolution2dForwardOutputDim");
  set_nchw(y_, y_shape_);
  set_nchw(bias_, {1, s.out_channels, 1, 1});

  cudnnHandle_t h = ctx.dnn();
  {
    int max = 0, got = 0;
    check_cudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max), "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
    check_cudnn(cudnnGetConvolutionForwardAlgorithm_v7(h, x_, w_, conv_, y_, max, &got, perf.data()),
                "cudnnGetConvolutionForwardAlgorithm_v7");
    std::size_t bytes = 0;
    const auto query = [&](cudnnConvolutionFwdAlgo_t a, std::size_t* b) {
      return cudnnGetConvolutionForwardWorkspaceSize(h, x_, w_, conv_, y_, a, b);
    };
    if (!choose(perf.data(), got, query, fwd_, bytes)) no_algorithm(s, "forward");
    workspace_ = std::max(workspace_, bytes);
  }
  {
    int max = 0, got = 0;
    check_cudnn(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max),
                "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
    check_cudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w_, y_, conv_, x_, max, &got, perf.data()),
                "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    std::size_t bytes = 0;
    const auto query = [&](cudnnConvolutionBwdDataAlgo_t a, std::size_t* b) {
      return cudnnGetConvolutionBackwardDataWorkspaceSize(h, w_, y_, conv_, x_, a, b);
    };
    if (!choose(perf.data(), got, query, bwd_data_, bytes)) no_algorithm(s, "backward-data");
    workspace_ = std::max(workspace_, bytes);
  }
  {
    int max = 0, got = 0;
    check_cudnn(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max),
                "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
    check_cudnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x_, y_, conv_, w_, max, &got, perf.data()),
                "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    std::size_t bytes = 0;
    const auto query = [&](cudnnConvolutionBwdFilterAlgo_t a, std::size_t* b) {
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x_, y_, conv_, w_, a, b);
    };
    if (!choose(perf.data(), got, query, bwd_filter_, bytes)) no_algorithm(s, "backward-filter");
    workspace_ = std::max(workspace_, bytes);
  }
}

void conv2d_cudnn::forward(const float* x, const float* w, const float* b, float* y, void* ws) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnConvolutionForward(ctx_->dnn(), &one, x_, x, w_, w, conv_, fwd_, ws, workspace_, &zero, y_, y),
              "cudnnConvolutionForward");
  if (s_.bias && b) check_cudnn(cudnnAddTensor(ctx_->dnn(), &one, bias_, b, &one, y_, y), "cudnnAddTensor (bias)");
}

void conv2d_cudnn::backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                            void* ws) const {
  const float one = 1, zero = 0;
  if (dw)
    check_cudnn(cudnnConvolutionBackwardFilter(ctx_->dnn(), &one, x_, x, y_, dy, conv_, bwd_filter_, ws, workspace_,
                                               &zero, w_, dw),
                "cudnnConvolutionBackwardFilter");
  if (dx)
    check_cudnn(
        cudnnConvolutionBackwardData(ctx_->dnn(), &one, w_, w, y_, dy, conv_, bwd_data_, ws, workspace_, &zero, x_, dx),
        "cudnnConvolutionBackwardData");
  if (s_.bias && db)
    check_cudnn(cudnnConvolutionBackwardBias(ctx_->dnn(), &one, y_, dy, &zero, bias_, db),
                "cudnnConvolutionBackwardBias");
}

}  // namespace toru::train::detail::cuda
