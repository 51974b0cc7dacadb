#pragma once
// torch.nn.LayerNorm(d, eps) with its affine weight and bias, over the last dimension, and d2l's
// AddNorm built on it.

#include "attn/dropout.hpp"
#include "attn/tensor.hpp"

namespace attn {

constexpr float kLayerNormEps = 1e-5f;  // PyTorch's default

// x [n, d] -> y [n, d], row by row: y = (x - mean) / sqrt(var + eps) * weight + bias, with var
// the biased variance of the row (as PyTorch). Throws std::invalid_argument naming weight or
// bias when not [d], eps unless finite and > 0.
Matrix layer_norm(const MatrixRef& x, const VectorRef& weight, const VectorRef& bias,
                  float eps = kLayerNormEps);

// Gradients of sum(layer_norm(x, weight, bias) * dy). The row statistics are recomputed from x
// (O(n d), nothing kept from the forward).
struct LayerNormGradients {
  Matrix dx;
  Vector dweight, dbias;
};
LayerNormGradients layer_norm_backward(const MatrixRef& x, const VectorRef& weight,
                                       const MatrixRef& dy, float eps = kLayerNormEps);

// d2l's AddNorm: layer_norm(dropout(y) + x), x and y [n, d] (the sublayer's input and output).
Matrix add_norm(const MatrixRef& x, const MatrixRef& y, const VectorRef& weight,
                const VectorRef& bias, const DropoutOptions& dropout = {});

// Gradients of sum(add_norm(x, y, ...) * dout): dx, dy and the LayerNorm's; dropout as the
// forward's.
struct AddNormGradients {
  Matrix dx, dy;
  Vector dweight, dbias;
};
AddNormGradients add_norm_backward(const MatrixRef& x, const MatrixRef& y, const VectorRef& weight,
                                   const MatrixRef& dout, const DropoutOptions& dropout = {});

}  // namespace attn
