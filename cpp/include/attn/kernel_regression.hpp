#pragma once
// Nadaraya-Watson kernel regression: attention pooling whose weights come from a similarity
// kernel (attn/similarity.hpp).

#include <vector>

#include "attn/similarity.hpp"
#include "attn/tensor.hpp"

namespace attn {

// f(q) = sum_i alpha(q, k_i) v_i / sum_j alpha(q, k_j) with alpha from `similarity`, d = ||q - k||.
// keys [n, dx], values [n, dy], queries [m, dx] -> output [m, dy]; weights [m, n] (each row sums
// to 1, or is all zeros, see below) are written only when `weights` is non-null, and nothing of
// size m x n is allocated otherwise: the estimate is computed a block of queries at a time.
// The Gaussian weights are computed in log-sum-exp form, softmax(-||q - k_i||^2 / (2 sigma^2)),
// so a small bandwidth never underflows every weight to 0: as sigma -> 0 the estimate tends to
// the value of the nearest key (the mean of the nearest keys' values on ties). Each weight is
// within 2^-15 of its exact value (relative, beyond exp's few ulp): through the fused attention
// kernel where float products' rounding allows that, else with the distances in double
// (cpp/src/attention/gaussian_attention.hpp says when). The boxcar's and Epanechnikov's weights
// are those of the distances in double: float products say which keys are out of reach (and
// inside the boxcar) wherever their rounding cannot change the answer, and only the keys near
// the edge, and Epanechnikov's inside, get their distance in double
// (cpp/src/attention/compact_reach.hpp).
// A query that no key reaches has all-zero weights and a NaN output row: there is nothing to
// average, and NaN says so instead of a made-up 0. That happens with no keys (n = 0), and with
// the compactly supported boxcar (every d > sigma) and Epanechnikov (every d >= sigma).
// Throws std::invalid_argument on mismatched shapes (of the inputs, `output` or `weights`) or a
// bandwidth that is not finite and > 0.
void kernel_regression(const MatrixRef& keys, const MatrixRef& values, const MatrixRef& queries,
                       Similarity similarity, float bandwidth, MatrixMap output,
                       MatrixMap* weights = nullptr);

struct KernelRegression {
  Matrix output;   // [m, dy]
  Matrix weights;  // [m, n], or empty [0, 0] when not requested
};

// The same, into fresh matrices.
KernelRegression kernel_regression(const MatrixRef& keys, const MatrixRef& values,
                                   const MatrixRef& queries, Similarity similarity, float bandwidth,
                                   bool need_weights = true);

struct BandwidthSearch {
  std::vector<float> errors;  // one per bandwidth: mean over i of ||v_i - f_{-i}(k_i)||^2
  float best;  // the bandwidth with the smallest finite error (the first on ties), or NaN
};

// Leave-one-out cross-validation: each key is predicted from all the other keys, one key at a
// time (nothing of size n x n is allocated). The Gaussian never leaves a key unreached (see
// above), so each Gaussian error is finite for finite inputs and n >= 2, however small the
// bandwidth. With boxcar or Epanechnikov, a key that no other key reaches has no estimate, and
// that bandwidth's error is +infinity: it is never `best`. If no error is finite (or n < 2,
// where nothing can be left out), `best` is NaN.
// Throws std::invalid_argument on mismatched shapes, an empty bandwidth list or a bandwidth that
// is not finite and > 0.
BandwidthSearch leave_one_out(const MatrixRef& keys, const MatrixRef& values, Similarity similarity,
                              const std::vector<float>& bandwidths);

}  // namespace attn
