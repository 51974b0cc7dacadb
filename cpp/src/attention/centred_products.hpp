#pragma once
// Squared distances from float products, as kernel regression's fast paths compute them:
// ||q - k||^2 = ||q||^2 + ||k||^2 - 2 q . k, with q . k in the GEMM micro-kernels. The data are
// centred on the keys' mean first: distances do not change, and the norms that the products'
// rounding grows with shrink (data far from the origin would otherwise pay for their offset).
//
// The rounding: a float d^2 so computed is within (d + 6) u (Q + K)^2 of the exact one (u = 2^-24,
// Q and K the largest centred query and key norms; the dot product's d roundings, the norms',
// the sums', and the centring's each counted at their worst). rounding_bound() is that figure.

#include <vector>

#include "attn/tensor.hpp"

namespace attn::detail {

struct CentredProducts {
  // Keys [n, d] and queries [m, d], or none (nullptr): leave-one-out, where the keys are the
  // queries.
  CentredProducts(const MatrixRef& keys, const MatrixRef* queries);

  // The bound on |float d^2 - d^2| above; NaN or infinite for data that are not finite.
  double rounding_bound() const;

  // The queries centred, and their squared norms: the keys' for leave-one-out.
  const Matrix& centred_queries() const { return leave_one_out ? keys : queries; }
  const std::vector<double>& query_norms() const {
    return leave_one_out ? key_squared_norms : query_squared_norms;
  }

  bool leave_one_out;
  Matrix keys, queries;  // centred; queries empty for leave-one-out
  std::vector<double> key_squared_norms, query_squared_norms;  // of the centred rows, in double
  double largest;                                              // Q + K
};

}  // namespace attn::detail
