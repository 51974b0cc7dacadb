#pragma once
// Gaussian kernel regression as scaled dot-product attention, through the fused attention kernel
// (kernels/fused_attention.hpp): -||q - k_j||^2 / 2 sigma^2 = (q . k_j - ||k_j||^2 / 2) / sigma^2
// - ||q||^2 / 2 sigma^2, and the last term, the same for every key, leaves the softmax. So the
// weights are attention's with scale 1 / sigma^2 and a bias of -||k_j||^2 / 2 sigma^2 per key,
// and the products run in the GEMM micro-kernels rather than a row at a time.
//
// The price is float rounding in the dot products, which the difference of two such scores
// keeps while their common part cancels: the exponent t_j = (d_j^2 - d_min^2) / 2 sigma^2 is off
// by at most the products' rounding bound over sigma^2 (centred_products.hpp: (d + 6) u (Q + K)^2,
// the query's scaling and the bias within its margin). A weight exp(-t_j) is then within that
// factor of exp's (relative) of its exact value. exact_enough() says whether that bound is within
// kWeightTolerance; where it is not (a bandwidth small against the data's spread, or data that
// are not finite), kernel regression keeps its rows in double (kernels/regression_rows.hpp).

#include "attn/tensor.hpp"
#include "centred_products.hpp"

namespace attn::detail {

// The relative error allowed in each Gaussian weight (beyond exp's own few ulp): 2^-15.
constexpr double kWeightTolerance = 0x1p-15;

class GaussianAttention {
 public:
  // Keys [n, d] and values [n, dy] as every call against them reads them; queries [m, d], or
  // none (nullptr): leave-one-out, where each key is the query and hidden from itself.
  GaussianAttention(const MatrixRef& keys, const MatrixRef& values, const MatrixRef* queries);

  // Whether the float products meet kWeightTolerance at this bandwidth.
  bool exact_enough(float bandwidth) const;

  // output [m, dy] (or [n, dy] for leave-one-out) and, when non-null, the weights [m, n].
  void run(float bandwidth, float* output, float* weights) const;

 private:
  CentredProducts data_;
  Matrix values_;
};

}  // namespace attn::detail
