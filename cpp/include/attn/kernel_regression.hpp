#pragma once
// Nadaraya-Watson kernel regression: attention pooling whose weights come from a kernel.

#include <vector>

#include "attn/kernels.hpp"
#include "attn/tensor.hpp"

namespace attn {

struct KernelRegression {
  Matrix output;   // [m, dy]
  Matrix weights;  // [m, n]; each row sums to 1, or is all zeros (see below)
};

// f(q) = sum_i alpha(q, k_i) v_i / sum_j alpha(q, k_j) with alpha from `kernel`, d = ||q - k||.
// keys [n, dx], values [n, dy], queries [m, dx].
// A query that no key reaches (boxcar/epanechnikov with a small bandwidth) has all-zero weights
// and a NaN output row: there is nothing to average, and NaN says so instead of a made-up 0.
// Throws std::invalid_argument on mismatched shapes or a bandwidth that is not finite and > 0.
KernelRegression kernel_regression(const MatrixRef& keys, const MatrixRef& values,
                                   const MatrixRef& queries, Kernel kernel, float bandwidth);

struct BandwidthSearch {
  std::vector<float> errors;  // one per bandwidth: mean over i of ||v_i - f_{-i}(k_i)||^2
  float best;                 // the bandwidth with the smallest error (the first on ties)
};

// Leave-one-out cross-validation: each key is predicted from all the other keys.
// A key that no other key reaches makes that bandwidth's error +infinity; if every error is
// infinite (or n < 2, where nothing can be left out), `best` is NaN.
// Throws std::invalid_argument on mismatched shapes, an empty bandwidth list or a bandwidth <= 0.
BandwidthSearch leave_one_out(const MatrixRef& keys, const MatrixRef& values, Kernel kernel,
                              const std::vector<float>& bandwidths);

}  // namespace attn
