#pragma once
// nn.Linear: y = x W^T + b, W in PyTorch's [out_features, in_features] layout.

#include "attn/tensor.hpp"

namespace attn {

// x [n, in], W [out, in], b [out] (or empty: no bias) -> y [n, out].
// Throws std::invalid_argument naming the argument whose shape does not fit.
Matrix linear(const MatrixRef& x, const MatrixRef& weight, const VectorRef& bias = Vector());

// Gradients of sum(linear(x, W, b) * dy): dx = dy W, dW = dy^T x, db = column sums of dy.
struct LinearGradients {
  Matrix dx, dweight;
  Vector dbias;
};
LinearGradients linear_backward(const MatrixRef& x, const MatrixRef& weight, const MatrixRef& dy);

}  // namespace attn
