#pragma once
// RMSNorm (Zhang and Sennrich, 2019), as Hugging Face's LlamaRMSNorm computes it: each row
// divided by its root mean square, then scaled, with no mean subtracted and no bias.

#include "attn/tensor.hpp"

namespace attn {

// x [n, d] -> y [n, d]: y = x / sqrt(mean(x^2) + eps) * weight, row by row. Throws
// std::invalid_argument naming weight when not [d], eps unless finite and > 0.
Matrix rms_norm(const MatrixRef& x, const VectorRef& weight, float eps);

// Gradients of sum(rms_norm(x, weight) * dy); the row statistics are recomputed from x.
struct RmsNormGradients {
  Matrix dx;
  Vector dweight;
};
RmsNormGradients rms_norm_backward(const MatrixRef& x, const VectorRef& weight, const MatrixRef& dy,
                                   float eps);

}  // namespace attn
